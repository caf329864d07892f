import { type Selectable, sql } from 'kysely';
import { newId } from '../../core/ids.ts';
import {
  type BuilderCheckpoint,
  type BuilderState,
  type Column,
  DEFAULT_SETTINGS,
  type ExecutionLogEntry,
  type Project,
  type ProjectSettings,
} from '../../core/model.ts';
import type {
  BuilderRunState,
  ColumnUpdate,
  ColumnUpdateOutcome,
  JobsOf,
  NewColumn,
  NewProject,
  ProjectListQuery,
  ProjectRepo,
} from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import { storeJobs } from './job-outbox-repo.ts';
import { columnRecord, ProjectColumns } from './project-columns.ts';
import { likeEscape } from './rows/row-filter-sql.ts';
import type { ProjectTable } from './tables.ts';

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

export class SqlProjectRepo implements ProjectRepo {
  private readonly projectColumns: ProjectColumns;

  constructor(private readonly database: Database) {
    this.projectColumns = new ProjectColumns(database);
  }

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

  columns(project: Project | number): Promise<Column[]> {
    return this.projectColumns.columns(project);
  }

  addColumn(projectPk: number, column: NewColumn): Promise<Column> {
    return this.projectColumns.add(projectPk, column);
  }

  updateColumn(projectPk: number, columnsVersion: number, update: ColumnUpdate): Promise<ColumnUpdateOutcome> {
    return this.projectColumns.update(projectPk, columnsVersion, update);
  }

  deleteColumn(projectPk: number, colNo: number): Promise<boolean> {
    return this.projectColumns.delete(projectPk, colNo);
  }

  async rename(pk: number, name: string): Promise<void> {
    await this.db
      .updateTable('projects')
      .set({ name, name_lower: name.toLowerCase(), updated_at: Date.now() })
      .where('pk', '=', pk)
      .execute();
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
