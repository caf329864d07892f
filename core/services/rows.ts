import { quoted, ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Cell, Column, Project, StoredRow, Workspace } from '../model.ts';
import { approximateValueSize } from '../rows/cell-limits.ts';
import { checkRowQuota } from './quotas.ts';
import { checkFilterGroups, parseSortRules } from '../rows/filter-parse.ts';
import { rowView, type ViewOptions, valuesRowView } from '../rows/row-view.ts';
import { insertRows } from './row-insert.ts';

/**
 * Turns `{column name: value}` into stored cells. Every input column must be present; a key that
 * names no column, or names a tool column, is refused (403 with detail.message, as the spec asks).
 */
export function cellsFromCompany(columns: Column[], company: Record<string, unknown>): Record<number, Cell> {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const unknown = Object.keys(company).filter((k) => !byName.has(k));
  const tool = Object.keys(company).filter((k) => byName.get(k)?.type === 'tool');
  const missing = columns.filter((c) => c.type === 'input' && !(c.name in company)).map((c) => c.name);
  if (missing.length) {
    throw new ServiceError(
      'validation_error',
      {
        message: `Missing required columns: ${missing.join(', ')}. Send a value (or null) for every input column.`,
        missing_columns: missing,
      },
      { status: 403 },
    );
  }
  if (unknown.length || tool.length) {
    const parts = [];
    if (unknown.length) parts.push(`no column is named ${unknown.map((k) => quoted(k)).join(', ')}`);
    if (tool.length)
      parts.push(
        `${tool.map((k) => quoted(k)).join(', ')} ${tool.length > 1 ? 'are tool columns' : 'is a tool column'}, filled by the service`,
      );
    throw new ServiceError(
      'validation_error',
      { message: `Invalid payload: ${parts.join('; ')}. Remove ${unknown.length + tool.length > 1 ? 'those keys' : 'that key'}.` },
      { status: 403 },
    );
  }
  const cells: Record<number, Cell> = {};
  for (const c of columns) {
    cells[c.no] = c.type === 'input' ? { v: company[c.name] ?? null } : { v: null, s: 'pending' };
  }
  return cells;
}

/**
 * Each company's cells, all checked before anything is written: a bad one is refused naming its
 * index (`where(i)` prefixes the message), with `status` when the door answers another than 403.
 */
export function cellsOfEach(
  columns: Column[],
  companies: Record<string, unknown>[],
  where: (i: number) => string,
  status?: number,
): Record<number, Cell>[] {
  return companies.map((company, i) => {
    try {
      return cellsFromCompany(columns, company);
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
      const detail = typeof e.detail === 'string' ? { message: e.detail } : e.detail;
      throw new ServiceError(
        e.code,
        { ...detail, message: `${where(i)}${String(detail.message)}`, row_index: i },
        { status: status ?? e.status },
      );
    }
  });
}

export const toolColumnNos = (columns: Column[]): number[] => columns.filter((c) => c.type === 'tool').map((c) => c.no);

export async function addRow(kernel: Kernel, workspace: Workspace, project: Project, company: Record<string, unknown>, keyId?: string) {
  const [columns] = await Promise.all([kernel.storage.projects.columns(project), checkRowQuota(kernel, workspace, project.pk, 1)]);
  const cells = cellsFromCompany(columns, company);
  const out = await insertRows(kernel, project, columns, [cells], { keyId });
  if (out.created[0]) return { row_id: String(out.seqs[0]), message: 'Row created', error_detail: null };
  // The project's unique key names an existing row: that row answers (its empty cells filled with on_conflict "update").
  return { row_id: String(out.seqs[0]), message: out.updated ? ROW_UPDATED : ROW_EXISTS, error_detail: null };
}

export const ROW_EXISTS = 'Row already exists';
export const ROW_UPDATED = 'Row already exists; its empty cells were filled';

/** A page of rows; `filter_groups` and `sort_rules` come parsed from their JSON (each door parses it once). */
export async function listRows(
  kernel: Kernel,
  project: Project,
  q: {
    page: number;
    page_size: number;
    filter_groups?: unknown;
    sort_rules?: unknown;
    columns?: unknown;
    format?: 'cells' | 'values';
    meta?: boolean;
  },
) {
  const { columns, shown, filter, sort } = await rowQuery(kernel, project, q);
  const { rows, total } = await kernel.storage.rows.page({
    projectPk: project.pk,
    toolCols: toolColumnNos(columns),
    filter,
    sort,
    limit: q.page_size,
    offset: (q.page - 1) * q.page_size,
  });
  checkPageSize(kernel, shown, rows, q.meta === true);
  const options = { meta: q.meta === true };
  return {
    rows: rows.map((r) => (q.format === 'values' ? valuesRowView(shown, r, options) : rowView(project.id, shown, r, options))),
    page: q.page,
    page_size: q.page_size,
    total_rows: total,
    total_pages: Math.ceil(total / q.page_size),
  };
}

/** A read of rows as asked (GET rows, the CSV export): the columns shown, the filter and the sort, checked (422 naming what is wrong). */
export async function rowQuery(kernel: Kernel, project: Project, q: { filter_groups?: unknown; sort_rules?: unknown; columns?: unknown }) {
  const columns = await kernel.storage.projects.columns(project);
  const shown = q.columns === undefined ? columns : chosenColumns(columns, q.columns);
  const filter = q.filter_groups === undefined ? null : checkFilterGroups(q.filter_groups, columns);
  // filter-parse checks sort rules from JSON text only; they are a few small objects, so writing them out costs next to nothing.
  const sort = q.sort_rules === undefined ? [] : parseSortRules(JSON.stringify(q.sort_rules), columns);
  return { columns, shown, filter, sort };
}

/** The columns a page shows (`columns`: names or col_ids, in the project's order); an unknown one is a 422 naming it. */
function chosenColumns(columns: Column[], asked: unknown): Column[] {
  if (!Array.isArray(asked) || asked.length === 0 || asked.some((a) => typeof a !== 'string')) {
    throw validationError('columns must be a JSON array of column names or col_ids', [
      { path: 'columns', message: 'must be a non-empty JSON array of column names or col_ids' },
    ]);
  }
  const wanted = new Set(asked as string[]);
  const known = new Set(columns.flatMap((c) => [c.name, c.id]));
  const unknown = (asked as string[]).filter((a) => !known.has(a));
  if (unknown.length) {
    throw validationError(`Unknown column${unknown.length > 1 ? 's' : ''}: ${unknown.slice(0, 5).join(', ')} (list_columns names them)`, [
      { path: 'columns', message: `names no column of this project: ${unknown.slice(0, 5).join(', ')}` },
    ]);
  }
  return columns.filter((c) => wanted.has(c.name) || wanted.has(c.id));
}

/** What each cell adds to a page's JSON besides its value: name, status and loading flag. */
const CELL_OVERHEAD = 60;
/** A cell's provenance, when asked for (include=meta), at most about this. */
const META_SIZE = 200;

/**
 * A page is never answered larger than MAX_PAGE_BYTES: a page that would be is refused with the
 * page_size that fits (never cut short in silence, which would make page numbers skip rows).
 */
function checkPageSize(kernel: Kernel, columns: Column[], rows: StoredRow[], meta: boolean): void {
  const bound = kernel.config.limits.pageBytes;
  let size = 0;
  let fit = 0;
  for (const row of rows) {
    for (const c of columns) {
      const cell = row.cells[c.no];
      size += CELL_OVERHEAD + c.name.length + approximateValueSize(cell?.v) + (cell?.e?.length ?? 0) + (meta && cell?.m ? META_SIZE : 0);
    }
    if (size > bound && fit > 0) {
      const mb = (n: number) => `${Math.round(n / 104857.6) / 10} MB`;
      const message = `This page would be over ${mb(bound)} (MAX_PAGE_BYTES): its rows hold large values. Ask for page_size=${fit} or less.`;
      throw validationError(message, [{ path: 'page_size', message: `at most ${fit} rows of this page fit in ${mb(bound)}` }]);
    }
    fit++;
  }
}

/** Row ids are decimal sequence numbers; anything else cannot name a row (404, never 422). */
export async function getRow(kernel: Kernel, project: Project, rowId: string, options: ViewOptions = {}) {
  const notFound = new ServiceError('not_found', `Row ${rowId} not found in this project`);
  if (!/^[1-9]\d{0,15}$/.test(rowId)) throw notFound;
  const columns = await kernel.storage.projects.columns(project);
  const row = await kernel.storage.rows.get(project.pk, Number(rowId), toolColumnNos(columns));
  if (!row) throw notFound;
  return rowView(project.id, columns, row, options);
}
