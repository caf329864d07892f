import type { Cell, CellMeta, Column, StoredRow } from '../model.ts';

/** What a view adds on request: `meta`, the provenance of each tool cell (include=meta / include_meta). */
export interface ViewOptions {
  meta?: boolean;
}

/** A cell as the API shows it (spec "Row"): `is_loading` is true exactly while queued or running. */
export interface CellView {
  name: string;
  value: unknown;
  status: string;
  is_loading: boolean;
  error?: string;
  /** With include=meta, on tool cells: where the value came from (null: no tool has run on it). */
  meta?: CellMeta | null;
}

export interface RowView {
  id: string;
  project_id: string;
  company: Record<string, CellView>;
}

export function cellView(column: Column, cell: Cell | undefined, options: ViewOptions = {}): CellView {
  const status = cell?.s ?? (column.type === 'tool' ? 'pending' : 'default');
  const view: CellView = {
    name: column.name,
    value: cell?.v ?? null,
    status,
    is_loading: status === 'queued' || status === 'running',
  };
  if (cell?.e) view.error = cell.e;
  if (options.meta && column.type === 'tool') view.meta = cell?.m ?? null;
  return view;
}

export function rowView(projectId: string, columns: Column[], row: StoredRow, options: ViewOptions = {}): RowView {
  const company: Record<string, CellView> = {};
  for (const c of columns) company[c.name] = cellView(c, row.cells[c.no], options);
  return { id: String(row.seq), project_id: projectId, company };
}

/** A row in the `values` format: values by column name, statuses only where a tool cell is not completed. */
export interface ValuesRowView {
  id: string;
  values: Record<string, unknown>;
  status?: Record<string, string>;
  errors?: Record<string, string>;
  /** With include=meta: column name → provenance, for the tool cells a tool has run on. */
  meta?: Record<string, CellMeta>;
}

export function valuesRowView(columns: Column[], row: StoredRow, options: ViewOptions = {}): ValuesRowView {
  const values: Record<string, unknown> = {};
  const status: Record<string, string> = {};
  const errors: Record<string, string> = {};
  const meta: Record<string, CellMeta> = {};
  for (const c of columns) {
    const cell = row.cells[c.no];
    values[c.name] = cell?.v ?? null;
    if (c.type !== 'tool') continue;
    const s = cell?.s ?? 'pending';
    if (s !== 'completed') status[c.name] = s;
    if (cell?.e) errors[c.name] = cell.e;
    if (options.meta && cell?.m) meta[c.name] = cell.m;
  }
  return {
    id: String(row.seq),
    values,
    ...(Object.keys(status).length ? { status } : {}),
    ...(Object.keys(errors).length ? { errors } : {}),
    ...(options.meta ? { meta } : {}),
  };
}

/** The "first_company_data" sample: column name → value. */
export function rowValues(columns: Column[], row: StoredRow | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!row) return out;
  for (const c of columns) out[c.name] = row.cells[c.no]?.v ?? null;
  return out;
}
