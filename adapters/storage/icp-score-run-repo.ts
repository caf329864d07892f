import type { IcpDefinition } from '../../core/icp/definition.ts';
import type { ScoreTally } from '../../core/icp/score-tally.ts';
import type { IcpScoreRunRecord, IcpScoreRunRepo, IcpScoreRunStatus, JobsOf } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import { storeJobs } from './job-outbox-repo.ts';
import type { IcpScoreRunTable } from './tables.ts';

const toRun = (r: IcpScoreRunTable): IcpScoreRunRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  icpId: r.icp_id,
  projectPk: Number(r.project_pk),
  projectId: r.project_id,
  colNo: r.col_no === null ? null : Number(r.col_no),
  definition: JSON.parse(r.definition) as IcpDefinition,
  status: r.status as IcpScoreRunStatus,
  rowsTotal: Number(r.rows_total),
  rowsDone: Number(r.rows_done),
  afterSeq: Number(r.after_seq),
  tally: JSON.parse(r.tally) as ScoreTally,
  error: r.error,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** score_icp runs over Kysely; the caller's reads are scoped to its workspace. */
export class SqlIcpScoreRunRepo implements IcpScoreRunRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(run: Omit<IcpScoreRunRecord, 'createdAt' | 'updatedAt'>, jobs?: JobsOf<IcpScoreRunRecord>): Promise<IcpScoreRunRecord> {
    const now = Date.now();
    const row: IcpScoreRunTable = {
      id: run.id,
      workspace_id: run.workspaceId,
      icp_id: run.icpId,
      project_pk: run.projectPk,
      project_id: run.projectId,
      col_no: run.colNo,
      definition: JSON.stringify(run.definition),
      status: run.status,
      rows_total: run.rowsTotal,
      rows_done: run.rowsDone,
      after_seq: run.afterSeq,
      tally: JSON.stringify(run.tally),
      error: run.error,
      created_at: now,
      updated_at: now,
    };
    if (!jobs) {
      await this.db.insertInto('icp_score_runs').values(row).execute();
      return toRun(row);
    }
    // The run and the job that works it commit together.
    return this.db.transaction().execute(async (trx) => {
      await trx.insertInto('icp_score_runs').values(row).execute();
      const created = toRun(row);
      await storeJobs(trx, jobs(created));
      return created;
    });
  }

  async get(workspaceId: string, id: string): Promise<IcpScoreRunRecord | undefined> {
    const r = await this.db
      .selectFrom('icp_score_runs')
      .selectAll()
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    return r && toRun(r);
  }

  async getById(id: string): Promise<IcpScoreRunRecord | undefined> {
    const r = await this.db.selectFrom('icp_score_runs').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toRun(r);
  }

  async unfinished(): Promise<string[]> {
    const rows = await this.db.selectFrom('icp_score_runs').select('id').where('status', 'in', ['queued', 'running']).execute();
    return rows.map((r) => r.id);
  }

  async update(id: string, patch: Partial<Pick<IcpScoreRunRecord, 'status' | 'rowsDone' | 'afterSeq' | 'tally' | 'error'>>): Promise<void> {
    const set: Partial<IcpScoreRunTable> = { updated_at: Date.now() };
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.rowsDone !== undefined) set.rows_done = patch.rowsDone;
    if (patch.afterSeq !== undefined) set.after_seq = patch.afterSeq;
    if (patch.tally !== undefined) set.tally = JSON.stringify(patch.tally);
    if (patch.error !== undefined) set.error = patch.error;
    await this.db.updateTable('icp_score_runs').set(set).where('id', '=', id).execute();
  }
}
