import type { Answer, Schema } from '../../api-shapes.ts';

/** The shapes the table pages read from the REST API (rows, columns, projects): the generated API types (api-shapes.ts). */

export type Column = Schema<'Column'>;
export type Project = Answer<'get_project'>;
/**
 * A cell as the grid holds it: as the API answers it, or as the page writes it in place (an edited
 * value, a `cells` event's status and error) — so only its value is sure.
 */
export type ApiCell = Pick<Schema<'Cell'>, 'value'> & Partial<Pick<Schema<'Cell'>, 'status'>> & { error?: Schema<'Cell'>['error'] | null };
/** A row as the grid holds it: its cells may be written in place (ApiCell). */
export type Row = Omit<Schema<'Row'>, 'company'> & { company: Record<string, ApiCell> };
