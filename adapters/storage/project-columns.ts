import { sql } from 'kysely';
import { ServiceError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { type Column, DEFAULT_SETTINGS, type Project, type ProjectSettings, type WaterfallStep } from '../../core/model.ts';
import type { ColumnUpdate, ColumnUpdateOutcome, NewColumn } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import type { ColumnTable } from './tables.ts';

const json = (s: string | null): unknown => (s === null ? null : JSON.parse(s));

function toColumn(r: ColumnTable): Column {
  return {
    no: Number(r.col_no),
    id: r.id,
    name: r.name,
    type: r.type as Column['type'],
    toolId: r.tool_id,
    config: json(r.config),
    autoRun: Boolean(r.auto_run),
    runCondition: r.run_condition,
    waterfall: json(r.waterfall) as WaterfallStep[] | null,
    maxCreditsPerRow: r.max_credits_per_row === null ? null : Number(r.max_credits_per_row),
    stepOrder: r.step_order === 'auto' ? 'auto' : 'listed',
    position: Number(r.position),
  };
}

export function columnRecord(projectPk: number, colNo: number, c: NewColumn, position: number, now: number): ColumnTable {
  return {
    project_pk: projectPk,
    col_no: colNo,
    id: newId(),
    name: c.name,
    type: c.type,
    tool_id: c.toolId ?? null,
    config: c.config === undefined ? null : JSON.stringify(c.config),
    auto_run: c.autoRun ? 1 : 0,
    run_condition: c.runCondition ?? null,
    waterfall: c.waterfall ? JSON.stringify(c.waterfall) : null,
    max_credits_per_row: c.maxCreditsPerRow ?? null,
    step_order: c.stepOrder === 'auto' ? 'auto' : null,
    position,
    created_at: now,
    deleted_at: null,
  };
}

/** Projects whose column lists are remembered per process (oldest forgotten first). */
const COLUMN_CACHE_PROJECTS = 5_000;

/** What update_column writes into the column's record: only the fields it changes. */
function changedFields(update: ColumnUpdate): Partial<ColumnTable> {
  return {
    ...(update.name !== undefined ? { name: update.name } : {}),
    ...(update.config !== undefined ? { config: JSON.stringify(update.config) } : {}),
    ...(update.waterfall !== undefined ? { waterfall: update.waterfall ? JSON.stringify(update.waterfall) : null } : {}),
    ...(update.autoRun !== undefined ? { auto_run: update.autoRun ? 1 : 0 } : {}),
    ...(update.runCondition !== undefined ? { run_condition: update.runCondition } : {}),
  };
}

/** The settings with a unique key column renamed (null: the key does not name it, nothing to write). */
function renamedSettings(stored: string | null, from: string, to: string): string | null {
  const settings: ProjectSettings = { ...DEFAULT_SETTINGS, ...(json(stored) as Partial<ProjectSettings> | null) };
  if (!settings.uniqueColumns.includes(from)) return null;
  return JSON.stringify({ ...settings, uniqueColumns: settings.uniqueColumns.map((n) => (n === from ? to : n)) });
}

/**
 * A project's columns (`project_columns`): read, remembered per process under the project's
 * `columnsVersion` (`next_col_no`, which every change of its columns advances), added, changed and
 * deleted. Part of SqlProjectRepo.
 */
export class ProjectColumns {
  private readonly cache = new Map<number, { version: number; columns: Column[] }>();

  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  /**
   * A project's columns, in order. Given the project as just read, from memory when they were read
   * at the same `columnsVersion`; every change to a project's columns advances it, and the columns
   * are read with the version they are at (one statement, one snapshot), so a remembered list is
   * exact. Given its pk only, read now.
   */
  async columns(project: Project | number): Promise<Column[]> {
    const pk = typeof project === 'number' ? project : project.pk;
    const known = typeof project === 'number' ? undefined : this.cache.get(pk);
    if (known && typeof project !== 'number' && known.version === project.columnsVersion) return [...known.columns];
    const { columns, version } = await this.read(pk);
    this.cache.delete(pk);
    this.cache.set(pk, { version, columns: columns.map((c) => Object.freeze(c)) });
    if (this.cache.size > COLUMN_CACHE_PROJECTS) this.cache.delete(this.cache.keys().next().value as number);
    return columns;
  }

  /** The live columns with the version they are at (-1 for a project without columns: not remembered). */
  private async read(projectPk: number): Promise<{ columns: Column[]; version: number }> {
    const rows = await this.db
      .selectFrom('project_columns')
      .selectAll('project_columns')
      .select((eb) => eb.selectFrom('projects').select('projects.next_col_no').where('projects.pk', '=', projectPk).as('columns_version'))
      .where('project_pk', '=', projectPk)
      .where('deleted_at', 'is', null)
      .orderBy('position')
      .orderBy('col_no')
      .execute();
    return { columns: rows.map(toColumn), version: rows[0] ? Number(rows[0].columns_version) : -1 };
  }

  /**
   * Adds a column at the end. Every live row gets its (empty, `pending` for tools) cell key in the
   * same transaction, so filters on the new column see every row.
   */
  async add(projectPk: number, column: NewColumn): Promise<Column> {
    return this.db.transaction().execute(async (trx) => {
      // Lock the project record: column numbers and names are decided one writer at a time.
      const lock = trx.selectFrom('projects').select(['next_col_no']).where('pk', '=', projectPk);
      const project = await this.database.dialect.locking.lockedRead(lock).executeTakeFirstOrThrow();
      const taken = await trx
        .selectFrom('project_columns')
        .select(['name', 'position'])
        .where('project_pk', '=', projectPk)
        .where('deleted_at', 'is', null)
        .execute();
      if (taken.some((c) => c.name === column.name)) {
        throw new ServiceError('validation_error', {
          message: `A column named "${column.name}" already exists; choose another name`,
          errors: [{ path: 'name', message: 'is already used' }],
        });
      }
      const colNo = Number(project.next_col_no);
      const position = taken.reduce((m, c) => Math.max(m, Number(c.position)), 0) + 1;
      const now = Date.now();
      const record = columnRecord(projectPk, colNo, column, position, now);
      await trx.insertInto('project_columns').values(record).execute();
      await trx
        .updateTable('projects')
        .set({ next_col_no: colNo + 1, updated_at: now })
        .where('pk', '=', projectPk)
        .execute();
      const status = column.type === 'tool' ? (column.cellStatus ?? 'pending') : 'default';
      await sql`INSERT INTO cell_keys (project_pk, col_no, seq, status, is_empty, num_missing, num_key, text_key, text_full)
        SELECT project_pk, ${colNo}, seq, ${status}, 1, 1, NULL, '', NULL FROM project_rows
        WHERE project_pk = ${projectPk} AND deleted_at IS NULL`.execute(trx);
      return toColumn(record);
    });
  }

  /**
   * Changes a column (and the other columns a rename rewrites, and the unique key's names), under
   * the project's lock, only while its columns are at `columnsVersion`. Cells are stored by column
   * number, so a rename leaves every value where it is.
   */
  async update(projectPk: number, columnsVersion: number, update: ColumnUpdate): Promise<ColumnUpdateOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const lock = trx
        .selectFrom('projects')
        .select(['next_col_no', 'settings'])
        .where('pk', '=', projectPk)
        .where('deleted_at', 'is', null);
      const project = await this.database.dialect.locking.lockedRead(lock).executeTakeFirst();
      if (!project) return 'gone';
      if (Number(project.next_col_no) !== columnsVersion) return 'moved';
      const live = await trx
        .selectFrom('project_columns')
        .selectAll()
        .where('project_pk', '=', projectPk)
        .where('deleted_at', 'is', null)
        .execute();
      const current = live.find((c) => Number(c.col_no) === update.colNo);
      if (!current) return 'gone';
      const renamed = update.name !== undefined && update.name !== current.name;
      if (renamed && live.some((c) => c.name === update.name)) {
        throw new ServiceError('conflict', `A column named "${update.name}" already exists in this project; choose another name`);
      }
      const fields = changedFields(update);
      const now = Date.now();
      if (Object.keys(fields).length) {
        await trx
          .updateTable('project_columns')
          .set(fields)
          .where('project_pk', '=', projectPk)
          .where('col_no', '=', update.colNo)
          .execute();
      }
      for (const other of update.rewritten ?? []) {
        await trx
          .updateTable('project_columns')
          .set({ config: JSON.stringify(other.config), waterfall: other.waterfall ? JSON.stringify(other.waterfall) : null })
          .where('project_pk', '=', projectPk)
          .where('col_no', '=', other.colNo)
          .execute();
      }
      const settings = renamed ? renamedSettings(project.settings, current.name, update.name as string) : null;
      // The column number moves on: every process's cached columns of this project are stale now.
      await trx
        .updateTable('projects')
        .set({ next_col_no: Number(project.next_col_no) + 1, updated_at: now, ...(settings ? { settings } : {}) })
        .where('pk', '=', projectPk)
        .execute();
      return { column: toColumn({ ...current, ...fields }) };
    });
  }

  async delete(projectPk: number, colNo: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const now = Date.now();
      const r = await trx
        .updateTable('project_columns')
        .set({ deleted_at: now })
        .where('project_pk', '=', projectPk)
        .where('col_no', '=', colNo)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      // The column number moves on: every process's cached columns of this project are stale now.
      await trx
        .updateTable('projects')
        .set((eb) => ({ next_col_no: eb('next_col_no', '+', 1), updated_at: now }))
        .where('pk', '=', projectPk)
        .execute();
      return true;
    });
  }
}
