import type { Kysely } from 'kysely';
import type { JobOutboxRepo, OutboxJob } from '../../core/ports/storage.ts';
import { chunks, insertMany } from './compiled-queries.ts';
import type { Database } from './database.ts';
import type { JobOutboxTable, Tables } from './tables.ts';

const FIELDS = ['id', 'type', 'payload', 'created_at', 'tenant'] as const;
/** Outbox records per multi-row statement (5 parameters each). */
const CHUNK = 500;

/**
 * Stores the jobs a write starts, in that write's transaction: called by every repository write that
 * takes a `JobsOf` (rows, projects, score runs), after its own statements and before its commit.
 */
export async function storeJobs(trx: Kysely<Tables>, jobs: OutboxJob[]): Promise<void> {
  if (jobs.length === 0) return;
  const now = Date.now();
  const records: JobOutboxTable[] = jobs.map((j) => ({
    id: j.id,
    type: j.type,
    payload: JSON.stringify(j.payload ?? null),
    created_at: now,
    tenant: j.tenant ?? null,
  }));
  for (const part of chunks(records, CHUNK)) await insertMany(trx, 'job_outbox', FIELDS, part);
}

/** The job outbox over Kysely (migration 013). */
export class SqlJobOutboxRepo implements JobOutboxRepo {
  constructor(private readonly database: Database) {}

  async due(olderThanMs: number, limit: number): Promise<OutboxJob[]> {
    const rows = await this.database.db
      .selectFrom('job_outbox')
      .select(['id', 'type', 'payload', 'tenant'])
      .where('created_at', '<=', Date.now() - olderThanMs)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      type: r.type,
      payload: JSON.parse(r.payload) as unknown,
      ...(r.tenant ? { tenant: r.tenant } : {}),
    }));
  }

  /** Ids waiting for the next delete, and that delete (it starts once the one before it ended). */
  private queued: string[] = [];
  private nextDelete: Promise<void> | undefined;
  private lastDelete: Promise<unknown> = Promise.resolve();

  /**
   * Forgets handed-over jobs. The deletes of calls that arrive while one runs go together in the
   * next statement: single-row inserts that start jobs each used to pay a delete and its commit.
   */
  remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    this.queued.push(...ids);
    if (!this.nextDelete) {
      const next = this.lastDelete.then(() => {
        this.nextDelete = undefined;
        return this.deleteNow(this.queued.splice(0));
      });
      this.nextDelete = next;
      this.lastDelete = next.catch(() => undefined);
    }
    return this.nextDelete;
  }

  private async deleteNow(ids: string[]): Promise<void> {
    for (const part of chunks(ids, this.database.dialect.limits.inListSize))
      await this.database.db.deleteFrom('job_outbox').where('id', 'in', part).execute();
  }

  async depth(): Promise<number> {
    const r = await this.database.db
      .selectFrom('job_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async clear(): Promise<number> {
    const r = await this.database.db.deleteFrom('job_outbox').executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
