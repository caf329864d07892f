import { type Selectable, sql } from 'kysely';
import { ServiceError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import {
  type BuilderCheckpoint,
  type BuilderState,
  type Column,
  DEFAULT_SETTINGS,
  type ExecutionLogEntry,
  type Project,
  type ProjectSettings,
  type WaterfallStep,
} from '../../core/model.ts';
import type { BuilderRunState, JobsOf, NewColumn, NewProject, ProjectListQuery, ProjectRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import { storeJobs } from './job-outbox-repo.ts';
import { likeEscape } from './rows/row-filter-sql.ts';
import type { ColumnTable, ProjectTable } from './tables.ts';

const json = (s: string | null): unknown => (s === null ? null : JSON.parse(s));

/** A project record as the kernel sees it (the builder's form is read apart: `formData`). */
export function toProject(r: Omit<Selectable<ProjectTable>, 'form_data'>): Project {
  return {
    pk: Number(r.pk),
    id: r.id,
    workspaceId: r.workspace_id,
    creatorId: r.creator_id,
    name: r.name,
    builderId: r.builder_id,
    builderStatus: r.builder_status as BuilderState,
    builderError: r.builder_error,
    builderProgress: json(r.builder_progress) as Project['builderProgress'],
    savedFilters: (json(r.saved_filters) as unknown[] | null) ?? [],
    builderCheckpoint: json(r.builder_checkpoint) as BuilderCheckpoint | null,
    executionLog: (json(r.execution_log) as ExecutionLogEntry[] | null) ?? [],
    columnsVersion: Number(r.next_col_no),
    settings: { ...DEFAULT_SETTINGS, ...(json(r.settings) as Partial<ProjectSettings> | null) },
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/**
 * Every project field but the builder's form: only the builder run reads the form (`formData`),
 * and a pasted CSV can make it megabytes, which no other read should carry.
 */
export const PROJECT_FIELDS = [
  'pk',
  'id',
  'workspace_id',
  'creator_id',
  'name',
  'name_lower',
  'builder_id',
  'builder_status',
  'builder_error',
  'builder_progress',
  'next_col_no',
  'saved_filters',
  'builder_checkpoint',
  'execution_log',
  'settings',
  'created_at',
  'updated_at',
  'deleted_at',
] as const satisfies readonly (keyof ProjectTable)[];

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

function columnRecord(projectPk: number, colNo: number, c: NewColumn, position: number, now: number): ColumnTable {
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

export class SqlProjectRepo implements ProjectRepo {
  private readonly columnCache = new Map<number, { version: number; columns: Column[] }>();

  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(input: NewProject, jobs?: JobsOf<Project>): Promise<Project> {
    const now = Date.now();
    const values = {
      id: input.id ?? newId(),
      workspace_id: input.workspaceId,
      creator_id: input.creatorId,
      name: input.name,
      name_lower: input.name.toLowerCase(),
      builder_id: input.builderId,
      form_data: input.formData === undefined ? null : JSON.stringify(input.formData),
      builder_status: input.builderId ? 'queued' : 'completed',
      builder_error: null,
      builder_progress: null,
      next_col_no: input.columns.length + 1,
      saved_filters: null,
      builder_checkpoint: null,
      execution_log: null,
      settings: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    // Project and columns commit together: a refused project leaves nothing behind.
    return this.db.transaction().execute(async (trx) => {
      const r = await trx.insertInto('projects').values(values).executeTakeFirstOrThrow();
      const pk = Number(r.insertId);
      if (input.columns.length) {
        await trx
          .insertInto('project_columns')
          .values(input.columns.map((c, i) => columnRecord(pk, i + 1, c, i + 1, now)))
          .execute();
      }
      const project = toProject({ ...values, pk });
      if (jobs) await storeJobs(trx, jobs(project)); // the builder run starts with its project, or neither exists
      return project;
    });
  }

  async get(workspaceId: string, id: string): Promise<Project | undefined> {
    const r = await this.db
      .selectFrom('projects')
      .select(PROJECT_FIELDS)
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return r && toProject(r);
  }

  async isLive(pk: number): Promise<boolean> {
    return (
      (await this.db.selectFrom('projects').select('pk').where('pk', '=', pk).where('deleted_at', 'is', null).executeTakeFirst()) !==
      undefined
    );
  }

  async getByPk(pk: number): Promise<Project | undefined> {
    const r = await this.db
      .selectFrom('projects')
      .select(PROJECT_FIELDS)
      .where('pk', '=', pk)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return r && toProject(r);
  }

  async formData(pk: number): Promise<unknown> {
    const r = await this.db.selectFrom('projects').select('form_data').where('pk', '=', pk).executeTakeFirst();
    return json(r?.form_data ?? null);
  }

  async unfinishedBuilds(): Promise<number[]> {
    const rows = await this.db
      .selectFrom('projects')
      .select('pk')
      .where('builder_status', 'in', ['queued', 'running'])
      .where('deleted_at', 'is', null)
      .execute();
    return rows.map((r) => Number(r.pk));
  }

  async list(q: ProjectListQuery): Promise<{ projects: Project[]; total: number }> {
    let base = this.db.selectFrom('projects').where('workspace_id', '=', q.workspaceId).where('deleted_at', 'is', null);
    if (q.nameSearch) {
      base = base.where(sql<boolean>`name_lower LIKE ${`%${likeEscape(q.nameSearch.toLowerCase())}%`} ESCAPE '!'`);
    }
    const [rows, count] = await Promise.all([
      base.select(PROJECT_FIELDS).orderBy('updated_at', 'desc').orderBy('pk', 'desc').limit(q.limit).offset(q.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
    ]);
    return { projects: rows.map(toProject), total: Number(count?.n ?? 0) };
  }

  async countLive(workspaceId: string): Promise<number> {
    const r = await this.db
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /**
   * A project's columns, in order. Given the project as just read, from memory when they were read
   * at the same `columnsVersion`: columns are only ever added, and adding one advances the version,
   * so a remembered list is exact (any future change to columns must advance it too). Given its pk
   * only, read now.
   */
  async columns(project: Project | number): Promise<Column[]> {
    if (typeof project === 'number') return this.readColumns(project);
    const known = this.columnCache.get(project.pk);
    if (known && known.version === project.columnsVersion) return [...known.columns];
    const columns = await this.readColumns(project.pk);
    // Read after the project: a column added meanwhile shows up here, and then under a newer version too.
    const version = columns.reduce((m, c) => Math.max(m, c.no), 0) + 1 === project.columnsVersion ? project.columnsVersion : -1;
    this.columnCache.delete(project.pk);
    this.columnCache.set(project.pk, { version, columns: columns.map((c) => Object.freeze(c)) });
    if (this.columnCache.size > COLUMN_CACHE_PROJECTS) this.columnCache.delete(this.columnCache.keys().next().value as number);
    return columns;
  }

  private async readColumns(projectPk: number): Promise<Column[]> {
    const rows = await this.db
      .selectFrom('project_columns')
      .selectAll()
      .where('project_pk', '=', projectPk)
      .where('deleted_at', 'is', null)
      .orderBy('position')
      .orderBy('col_no')
      .execute();
    return rows.map(toColumn);
  }

  /**
   * Adds a column at the end. Every live row gets its (empty, `pending` for tools) cell key in the
   * same transaction, so filters on the new column see every row.
   */
  async addColumn(projectPk: number, column: NewColumn): Promise<Column> {
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

  async deleteColumn(projectPk: number, colNo: number): Promise<boolean> {
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

  async setSavedFilters(pk: number, filterGroups: unknown[]): Promise<void> {
    await this.db
      .updateTable('projects')
      .set({ saved_filters: JSON.stringify(filterGroups), updated_at: Date.now() })
      .where('pk', '=', pk)
      .execute();
  }

  async setSettings(pk: number, settings: string): Promise<void> {
    await this.db.updateTable('projects').set({ settings, updated_at: Date.now() }).where('pk', '=', pk).execute();
  }

  async softDelete(pk: number): Promise<void> {
    await this.db.updateTable('projects').set({ deleted_at: Date.now() }).where('pk', '=', pk).execute();
  }

  async setBuilderState(pk: number, state: BuilderRunState): Promise<void> {
    await this.db.updateTable('projects').set(builderStateValues(state)).where('pk', '=', pk).execute();
  }

  async restartBuilder(pk: number, state: BuilderRunState, jobs: JobsOf<boolean>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // The status test is in the UPDATE itself: of two starts at once, one changes the record.
      const r = await trx
        .updateTable('projects')
        .set(builderStateValues(state))
        .where('pk', '=', pk)
        .where('deleted_at', 'is', null)
        .where('builder_status', 'not in', ['queued', 'running'])
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      await storeJobs(trx, jobs(true));
      return true;
    });
  }
}

/** The `projects` columns a builder state update writes (fields left undefined are not touched). */
export function builderStateValues(state: BuilderRunState) {
  return {
    builder_status: state.builderStatus,
    updated_at: Date.now(),
    ...(state.builderError !== undefined ? { builder_error: state.builderError } : {}),
    ...(state.builderProgress !== undefined
      ? { builder_progress: state.builderProgress ? JSON.stringify(state.builderProgress) : null }
      : {}),
    ...(state.checkpoint !== undefined ? { builder_checkpoint: state.checkpoint ? JSON.stringify(state.checkpoint) : null } : {}),
    ...(state.log !== undefined ? { execution_log: JSON.stringify(state.log) } : {}),
  };
}
