import { ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Column, Project, ProjectSettings } from '../model.ts';
import { displayText } from '../rows/cell-values.ts';
import { rowKey } from '../rows/unique-key.ts';

/** Columns one unique key may combine. */
export const MAX_UNIQUE_COLUMNS = 5;

/** The settings as the API shows them. */
export const settingsView = (s: ProjectSettings) => ({ unique_columns: s.uniqueColumns, on_conflict: s.onConflict });

/** Checks the unique columns asked for: input columns of the project, each once, at most MAX_UNIQUE_COLUMNS. */
function checkUniqueColumns(columns: Column[], names: string[]): void {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const errors = names.flatMap((name, i) => {
    const c = byName.get(name);
    if (!c) return [{ path: `unique_columns[${i}]`, message: `"${name}" is not a column of this project (list_columns names them)` }];
    if (c.type !== 'input')
      return [{ path: `unique_columns[${i}]`, message: `"${name}" is a tool column; a unique key is made of input columns` }];
    if (names.indexOf(name) !== i) return [{ path: `unique_columns[${i}]`, message: `"${name}" is named twice` }];
    return [];
  });
  if (names.length > MAX_UNIQUE_COLUMNS) errors.push({ path: 'unique_columns', message: `at most ${MAX_UNIQUE_COLUMNS} columns` });
  if (errors.length) throw validationError(`Invalid unique_columns: ${errors.map((e) => e.message).join('; ')}`, errors);
}

/**
 * Every live row's key under the new unique columns; rows that share a key are a 409 naming them
 * (nothing changes: remove or fix them first). Rows whose key columns are all empty have no key.
 */
async function keysOfRows(kernel: Kernel, project: Project, keyColumns: Column[]) {
  const keys: { seq: number; key: string }[] = [];
  const firstOf = new Map<string, number>();
  const clashes: { row_ids: string[]; values: Record<string, string> }[] = [];
  let clashing = 0;
  for (let after = 0; ; ) {
    const page = await kernel.storage.rows.pageAfter(project.pk, after, 2000);
    if (page.length === 0) break;
    for (const row of page) {
      const values = keyColumns.map((c) => row.cells[c.no]?.v ?? null);
      const key = rowKey(values);
      if (!key) continue;
      const first = firstOf.get(key);
      if (first === undefined) {
        firstOf.set(key, row.seq);
        keys.push({ seq: row.seq, key });
        continue;
      }
      clashing++;
      if (clashes.length < 10) {
        clashes.push({
          row_ids: [String(first), String(row.seq)],
          values: Object.fromEntries(keyColumns.map((c, i) => [c.name, displayText(values[i])])),
        });
      }
    }
    after = (page[page.length - 1] as { seq: number }).seq;
  }
  if (clashing) {
    throw new ServiceError('conflict', {
      message: `${clashing} row(s) repeat the key of an earlier row; delete or change them (delete_rows), then set unique_columns again. Nothing was changed.`,
      duplicates: clashing,
      examples: clashes,
    });
  }
  return keys;
}

/**
 * PUT /projects/{id}/settings: the project's unique columns (input column names whose values,
 * normalised, identify a row) and what an insert of an existing key does (`skip`, or `update` the
 * existing row's empty input cells). Setting unique columns keys every live row at once.
 */
export async function updateSettings(
  kernel: Kernel,
  project: Project,
  body: { unique_columns?: string[]; on_conflict?: 'skip' | 'update' },
) {
  const columns = await kernel.storage.projects.columns(project.pk);
  const next: ProjectSettings = {
    uniqueColumns: body.unique_columns ?? project.settings.uniqueColumns,
    onConflict: body.on_conflict ?? project.settings.onConflict,
  };
  checkUniqueColumns(columns, next.uniqueColumns);
  const json = JSON.stringify(next);
  const same = next.uniqueColumns.join('\u0000') === project.settings.uniqueColumns.join('\u0000');
  if (same) {
    await kernel.storage.projects.setSettings(project.pk, json);
  } else {
    const keyColumns = next.uniqueColumns.map((name) => columns.find((c) => c.name === name) as Column);
    const keys = keyColumns.length ? await keysOfRows(kernel, project, keyColumns) : [];
    await kernel.storage.rows.replaceKeys(project.pk, json, keys);
  }
  return settingsView(next);
}
