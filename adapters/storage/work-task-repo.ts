import type { WorkTask, WorkTaskRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import type { WorkTaskTable } from './tables.ts';

const taskOf = (r: WorkTaskTable): WorkTask => ({
  id: r.id,
  workspaceId: r.workspace_id,
  projectPk: Number(r.project_pk),
  kind: r.kind === 'columns' ? 'columns' : 'builder',
  ...(r.col_ids ? { colIds: JSON.parse(r.col_ids) as string[] } : {}),
  total: Number(r.total),
  cancelledAt: r.cancelled_at === null ? null : Number(r.cancelled_at),
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** Work tasks over Kysely (migration 025). */
export class SqlWorkTaskRepo implements WorkTaskRepo {
  constructor(private readonly database: Database) {}

  async create(task: Omit<WorkTask, 'cancelledAt'>): Promise<void> {
    await this.database.db
      .insertInto('work_tasks')
      .values({
        id: task.id,
        workspace_id: task.workspaceId,
        project_pk: task.projectPk,
        kind: task.kind,
        col_ids: task.colIds ? JSON.stringify(task.colIds) : null,
        total: task.total,
        cancelled_at: null,
        created_at: task.createdAt,
        expires_at: task.expiresAt,
      })
      .execute();
  }

  async get(workspaceId: string, id: string, now = Date.now()): Promise<WorkTask | undefined> {
    const r = await this.database.db
      .selectFrom('work_tasks')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return r ? taskOf(r) : undefined;
  }

  async markCancelled(id: string, at: number): Promise<void> {
    await this.database.db
      .updateTable('work_tasks')
      .set({ cancelled_at: at })
      .where('id', '=', id)
      .where('cancelled_at', 'is', null)
      .execute();
  }

  async prune(now: number): Promise<number> {
    const r = await this.database.db.deleteFrom('work_tasks').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
