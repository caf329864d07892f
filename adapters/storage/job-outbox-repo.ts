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
  const records: Omit<JobOutboxTable, 'handed_at' | 'handed_to'>[] = jobs.map((j) => ({
    id: j.id,
    type: j.type,
    payload: JSON.stringify(j.payload ?? null),
    created_at: now,
    tenant: j.tenant ?? null,
  }));
  for (const part of chunks(records, CHUNK)) await insertMany(trx, 'job_outbox', FIELDS, part);
}

const toJob = (r: { id: string; type: string; payload: string; tenant: string | null }): OutboxJob => ({
  id: r.id,
  type: r.type,
  payload: JSON.parse(r.payload) as unknown,
  ...(r.tenant ? { tenant: r.tenant } : {}),
});

/** The job outbox over Kysely (migrations 013, 022, 026). */
export class SqlJobOutboxRepo implements JobOutboxRepo {
  constructor(private readonly database: Database) {}

  async due(olderThanMs: number, limit: number): Promise<OutboxJob[]> {
    const rows = await this.database.db
      .selectFrom('job_outbox')
      .select(['id', 'type', 'payload', 'tenant'])
      .where('handed_at', 'is', null)
      .where('created_at', '<=', Date.now() - olderThanMs)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toJob);
  }

  async handedElsewhere(serverId: string, withinMs: number, limit: number): Promise<OutboxJob[]> {
    const rows = await this.database.db
      .selectFrom('job_outbox')
      .select(['id', 'type', 'payload', 'tenant'])
      .where('handed_at', '>=', Date.now() - withinMs)
      .where('handed_to', '<>', serverId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toJob);
  }

  async forgetHanded(olderThanMs: number): Promise<number> {
    // A bounded batch at a time (ids first: DELETE … LIMIT is not portable); the relay calls again while there are more.
    const ids = await this.database.db
      .selectFrom('job_outbox')
      .select('id')
      .where('handed_at', '<', Date.now() - olderThanMs)
      .orderBy('handed_at')
      .limit(this.database.dialect.limits.inListSize)
      .execute();
    if (ids.length === 0) return 0;
    const r = await this.database.db
      .deleteFrom('job_outbox')
      .where(
        'id',
        'in',
        ids.map((i) => i.id),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Ids waiting for the next write, by what it does to them: null deletes them, a server id marks them handed to it. */
  private queued = new Map<string | null, string[]>();
  private nextWrite: Promise<void> | undefined;
  private lastWrite: Promise<unknown> = Promise.resolve();

  /**
   * Forgets handed-over jobs. The writes of calls that arrive while one runs go together in the
   * next statement: single-row inserts that start jobs each used to pay a write and its commit.
   */
  remove(ids: string[]): Promise<void> {
    return this.later(null, ids);
  }

  markHanded(ids: string[], serverId: string): Promise<void> {
    return this.later(serverId, ids);
  }

  private later(serverId: string | null, ids: string[]): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    this.queued.set(serverId, [...(this.queued.get(serverId) ?? []), ...ids]);
    if (!this.nextWrite) {
      const next = this.lastWrite.then(() => {
        this.nextWrite = undefined;
        const batch = this.queued;
        this.queued = new Map();
        return this.writeNow(batch);
      });
      this.nextWrite = next;
      this.lastWrite = next.catch(() => undefined);
    }
    return this.nextWrite;
  }

  private async writeNow(batch: Map<string | null, string[]>): Promise<void> {
    const { db, dialect } = this.database;
    const at = Date.now();
    for (const [serverId, ids] of batch) {
      for (const part of chunks(ids, dialect.limits.inListSize)) {
        if (serverId === null) await db.deleteFrom('job_outbox').where('id', 'in', part).execute();
        else await db.updateTable('job_outbox').set({ handed_at: at, handed_to: serverId }).where('id', 'in', part).execute();
      }
    }
  }

  async depth(): Promise<number> {
    const r = await this.database.db
      .selectFrom('job_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('handed_at', 'is', null)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async clear(): Promise<number> {
    const r = await this.database.db.deleteFrom('job_outbox').executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
