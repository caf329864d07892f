import type { Cell, Column, StoredRow } from '../model.ts';

/** A cell as the API shows it (spec "Row"): `is_loading` is true exactly while queued or running. */
export interface CellView {
  name: string;
  value: unknown;
  status: string;
  is_loading: boolean;
  error?: string;
}

export interface RowView {
  id: string;
  project_id: string;
  company: Record<string, CellView>;
}

export function cellView(column: Column, cell: Cell | undefined): CellView {
  const status = cell?.s ?? (column.type === 'tool' ? 'pending' : 'default');
  const view: CellView = {
    name: column.name,
    value: cell?.v ?? null,
    status,
    is_loading: status === 'queued' || status === 'running',
  };
  if (cell?.e) view.error = cell.e;
  return view;
}

export function rowView(projectId: string, columns: Column[], row: StoredRow): RowView {
  const company: Record<string, CellView> = {};
  for (const c of columns) company[c.name] = cellView(c, row.cells[c.no]);
  return { id: String(row.seq), project_id: projectId, company };
}

/** The "first_company_data" sample: column name → value. */
export function rowValues(columns: Column[], row: StoredRow | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!row) return out;
  for (const c of columns) out[c.name] = row.cells[c.no]?.v ?? null;
  return out;
}
