import type { Answer } from '../api-shapes.ts';

/** The project as its settings page reads it (GET /projects/{id}): the generated API types (api-shapes.ts). */
export type Project = Answer<'get_project'>;
export type Settings = Project['settings'];
export type Schedule = Answer<'get_project_schedule'>;
/**
 * What a 409 of PUT …/settings holds: rows that already repeat the new key. Written here: the
 * document does not describe that answer (it lists no 409 for the operation).
 */
export interface Duplicates {
  duplicates: number;
  examples: { row_ids: string[]; values: Record<string, string> }[];
}
