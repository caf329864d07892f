import { type Selectable, sql } from 'kysely';
import { newId } from '../../core/ids.ts';
import type { BuilderState, Column, Project } from '../../core/model.ts';
import type { NewColumn, ProjectListQuery, ProjectRepo } from '../../core/storage.ts';
import type { Database } from './database.ts';
import { likeEscape } from './row-filter-sql.ts';
import type { ColumnTable, ProjectTable } from './tables.ts';

const json = (s: string | null): unknown => (s === null ? null : JSON.parse(s));

function toProject(r: Selectable<ProjectTable>): Project {
  return {
    pk: Number(r.pk),
    id: r.id,
    workspaceId: r.workspace_id,
    creatorId: r.creator_id,
    name: r.name,
    builderId: r.builder_id,
    formData: json(r.form_data),
    builderStatus: r.builder_status as BuilderState,
    builderError: r.builder_error,
    builderProgress: json(r.builder_progress) as Project['builderProgress'],
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

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
    position: Number(r.position),
  };
}

export class SqlProjectRepo implements ProjectRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(input: {
    workspaceId: string;
    creatorId: string;
    name: string;
    builderId: string | null;
    formData: unknown;
    columns: NewColumn[];
  }): Promise<Project> {
    const now = Date.now();
    const values = {
      id: newId(),
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
          .values(
            input.columns.map((c, i) => ({
              project_pk: pk,
              col_no: i + 1,
              id: newId(),
              name: c.name,
              type: c.type,
              tool_id: c.toolId ?? null,
              config: c.config === undefined ? null : JSON.stringify(c.config),
              auto_run: c.autoRun ? 1 : 0,
              run_condition: c.runCondition ?? null,
              position: i + 1,
              created_at: now,
              deleted_at: null,
            })),
          )
          .execute();
      }
      return toProject({ ...values, pk });
    });
  }

  async get(workspaceId: string, id: string): Promise<Project | undefined> {
    const r = await this.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return r && toProject(r);
  }

  async getByPk(pk: number): Promise<Project | undefined> {
    const r = await this.db.selectFrom('projects').selectAll().where('pk', '=', pk).where('deleted_at', 'is', null).executeTakeFirst();
    return r && toProject(r);
  }

  async list(q: ProjectListQuery): Promise<{ projects: Project[]; total: number }> {
    let base = this.db
      .selectFrom('projects')
      .where('workspace_id', '=', q.workspaceId)
      .where('deleted_at', 'is', null);
    if (q.nameSearch) base = base.where(sqlLike('name_lower', q.nameSearch.toLowerCase()));
    const [rows, count] = await Promise.all([
      base.selectAll().orderBy('updated_at', 'desc').orderBy('pk', 'desc').limit(q.limit).offset(q.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
    ]);
    return { projects: rows.map(toProject), total: Number(count?.n ?? 0) };
  }

  async columns(projectPk: number): Promise<Column[]> {
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

  async softDelete(pk: number): Promise<void> {
    await this.db.updateTable('projects').set({ deleted_at: Date.now() }).where('pk', '=', pk).execute();
  }

  async setBuilderState(pk: number, state: Pick<Project, 'builderStatus' | 'builderError' | 'builderProgress'>): Promise<void> {
    await this.db
      .updateTable('projects')
      .set({
        builder_status: state.builderStatus,
        builder_error: state.builderError,
        builder_progress: state.builderProgress ? JSON.stringify(state.builderProgress) : null,
        updated_at: Date.now(),
      })
      .where('pk', '=', pk)
      .execute();
  }
}

function sqlLike(column: string, needle: string) {
  return sql<boolean>`${sql.ref(column)} LIKE ${`%${likeEscape(needle)}%`} ESCAPE '!'`;
}
