import { quoted, ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Cell, Column, Project } from '../model.ts';
import { UniqueKeyTaken } from '../ports/storage.ts';
import { cellValueProblem, rowValuesProblem } from '../rows/cell-limits.ts';
import { displayText } from '../rows/cell-values.ts';
import { rowKey } from '../rows/unique-key.ts';
import { getRow } from './rows.ts';

const ROW_ID = /^[1-9]\d{0,15}$/;

/** The input columns `cells` names (by name or col_id), each checked: 422 naming what is wrong, before anything is read. */
function editedColumns(columns: Column[], cells: Record<string, unknown>, kernel: Kernel): Map<Column, unknown> {
  const byKey = new Map(columns.flatMap((c) => [[c.name, c] as const, [c.id, c] as const]));
  const keys = Object.keys(cells);
  if (keys.length === 0) {
    throw validationError('cells names no column: give the new value of at least one input column', [
      { path: 'cells', message: 'must name at least one input column' },
    ]);
  }
  const unknown = keys.filter((k) => !byKey.has(k));
  if (unknown.length) {
    throw validationError(`No column of this project is named ${unknown.map((k) => quoted(k)).join(', ')} (list_columns names them)`, [
      ...unknown.map((k) => ({ path: `cells.${k}`, message: 'names no column of this project' })),
    ]);
  }
  const tools = keys.filter((k) => byKey.get(k)?.type === 'tool');
  if (tools.length) {
    throw validationError(
      `${tools.map((k) => quoted(byKey.get(k)?.name ?? k)).join(', ')} ${tools.length > 1 ? 'are tool columns' : 'is a tool column'}: tool cells are filled by their tool, not written. Re-run it instead (run_pending_columns with mode "all" and row_ids).`,
      tools.map((k) => ({ path: `cells.${k}`, message: 'is a tool column' })),
    );
  }
  const edited = new Map<Column, unknown>();
  for (const k of keys) {
    const column = byKey.get(k) as Column;
    if (edited.has(column)) {
      throw validationError(`"${column.name}" is named twice (by its name and its col_id)`, [
        { path: `cells.${k}`, message: 'names a column named already' },
      ]);
    }
    const problem = cellValueProblem(cells[k] ?? null, kernel.config.limits);
    if (problem) throw validationError(`Column "${column.name}" ${problem}`, [{ path: `cells.${k}`, message: problem }]);
    edited.set(column, cells[k] ?? null);
  }
  return edited;
}

/** A 409 saying which row holds the key the edit would give this one (nothing was written). */
function keyTaken(keyColumns: Column[], values: unknown[], holder?: number): ServiceError {
  const key = keyColumns.map((c, i) => `${c.name}: ${quoted(displayText(values[i]))}`).join(', ');
  return new ServiceError('conflict', {
    message: `${holder === undefined ? 'Another row' : `Row ${holder}`} already holds this unique key (${key}): nothing was written. Change the value, or delete that row first.`,
    unique_columns: keyColumns.map((c) => c.name),
    ...(holder === undefined ? {} : { row_id: String(holder) }),
  });
}

/**
 * PATCH /projects/{id}/rows/{row_id}: new values of a row's input cells, by column name or col_id.
 * Tool cells are their tool's (422); sizes are checked as on insert; a value that gives the row a
 * unique key another row holds is a 409 (nothing written), else the row's key follows its values.
 * One write: listings, filters and totals see the new values, the change counter moves, and a
 * `cells` project event tells open grids. Tool cells that read the edited values are not run again.
 */
export async function updateRow(kernel: Kernel, project: Project, rowId: string, cells: Record<string, unknown>) {
  const notFound = new ServiceError('not_found', `Row ${rowId} not found in this project`);
  if (!ROW_ID.test(rowId)) throw notFound;
  const columns = await kernel.storage.projects.columns(project);
  const edited = editedColumns(columns, cells, kernel);
  const seq = Number(rowId);
  const row = await kernel.storage.rows.get(project.pk, seq);
  if (!row) throw notFound;
  const value = (c: Column) => (edited.has(c) ? edited.get(c) : (row.cells[c.no]?.v ?? null));
  const inputs = columns.filter((c) => c.type === 'input');
  const tooLarge = rowValuesProblem(
    inputs.map((c): [string, unknown] => [c.name, value(c)]),
    kernel.config.limits,
  );
  if (tooLarge) throw validationError(tooLarge.message, [{ path: 'cells', message: tooLarge.message }]);

  const keyColumns = project.settings.uniqueColumns.map((name) => inputs.find((c) => c.name === name));
  const keyed = keyColumns.length > 0 && keyColumns.every((c) => c) && (keyColumns as Column[]).some((c) => edited.has(c));
  const keyValues = keyed ? (keyColumns as Column[]).map(value) : [];
  if (keyed) {
    const key = rowKey(keyValues);
    const holder = key ? (await kernel.storage.rows.findKeys(project.pk, [key])).get(key) : undefined;
    if (holder !== undefined && holder !== seq) throw keyTaken(keyColumns as Column[], keyValues, holder);
  }
  const write: Record<number, Cell> = {};
  for (const [c, v] of edited) write[c.no] = { v };
  try {
    const updated = await kernel.storage.rows.updateCells(
      project.pk,
      seq,
      write,
      keyed ? (keyColumns as Column[]).map((c) => c.no) : undefined,
    );
    if (!updated) throw notFound;
  } catch (e) {
    if (e instanceof UniqueKeyTaken) throw keyTaken(keyColumns as Column[], keyValues);
    throw e;
  }
  return getRow(kernel, project, rowId);
}
