import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { FilterNode } from '../../../core/rows/filter-parse.ts';
import type { Database } from '../database.ts';
import { reusableQuery } from '../compiled-queries.ts';
import type { Tables } from '../tables.ts';

/**
 * Filtered totals shared by every process (`filter_totals`, migration 012): a total counted once
 * stays exact through every later write, whichever process makes it, so the first filtered request
 * after another process wrote costs what a repeated one does.
 *
 * - A reader that must count a filter first registers it (shard 0, "counting") and commits, so
 *   writes from then on account for it; then, in one snapshot, it reads `v`, the adjustments made so
 *   far and the count, and settles the registration at the snapshot: base = v − adjustments so
 *   far, total = count − their deltas. Writes before the snapshot are in the count and in `v`;
 *   writes after it are in the adjustments.
 * - Every row write reads the project's registrations in its transaction, counts its rows against
 *   those it may change before and after (locking what it reads, as for the process's own totals),
 *   and adds its difference and one write to a random adjustment shard — in the same transaction
 *   that bumps `v`.
 * - A total is exact while `base_version + Σ adjusted == v`: every write since the count was
 *   accounted for. A write that could not account for it (it started before the registration, or
 *   came through a path that does not measure) leaves it behind, and the next reader counts again.
 *
 * Writes pay one small read per transaction, plus one statement when the project has
 * registrations; at most MAX_WATCHED filters per project are kept (the most recently counted).
 */

/** What a writer needs to know of a registered filter: the columns it reads, and the filter. */
export interface WatchedShape {
  filter: FilterNode;
  filterCols: number[];
  valueCols: number[];
  statusCols: number[];
}

export interface Watched extends WatchedShape {
  key: string;
  projectPk: number;
}

/** Filters of one project whose totals writers keep: each costs every write of the project a count. */
export const MAX_WATCHED = 8;
const ADJUST_SHARDS = 16;

/** The registration key of a filter (its canonical JSON, hashed to fit an index). */
export function filterKey(filter: FilterNode): string {
  return createHash('sha256').update(JSON.stringify(filter)).digest('hex');
}

export class SharedTotals {
  private readonly readQuery;
  private readonly watchedQuery;

  constructor(private readonly database: Database) {
    const { db } = database;
    this.readQuery = reusableQuery(['pk', 'key'], (v) =>
      db
        .selectFrom('filter_totals')
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<number>('total'), eb.lit(0)).as('total'),
          eb.fn.coalesce(eb.fn.sum<number>('adjusted'), eb.lit(0)).as('adjusted'),
          // The registration's base (-1 while counting, or when only adjustments are left of it).
          sql<number>`COALESCE(MAX(CASE WHEN shard = 0 THEN base_version END), -1)`.as('base'),
        ])
        .where('project_pk', '=', v('pk'))
        .where('filter_key', '=', v('key')),
    );
    this.watchedQuery = reusableQuery(['pk'], (v) =>
      db.selectFrom('filter_totals').select(['filter_key', 'shape']).where('project_pk', '=', v('pk')).where('shard', '=', 0),
    );
  }

  /** The shared total of a filter, when every write since it was counted has been accounted for (`version` = the project's `v`). */
  async exact(projectPk: number, key: string, version: number): Promise<number | undefined> {
    const [r] = await this.readQuery.run(this.database.db, { pk: projectPk, key });
    // No registration, or one still being counted (base -1).
    if (!r || Number(r.base) < 0) return undefined;
    return Number(r.base) + Number(r.adjusted) === version ? Number(r.total) : undefined;
  }

  /**
   * Counts a filter (`count`, run inside the snapshot) and registers its total for every process;
   * answers the count. Forgets the project's least recently counted filters past MAX_WATCHED.
   * `versionIn` reads the project's change counter in the snapshot.
   */
  async recount(
    projectPk: number,
    key: string,
    shape: WatchedShape,
    versionIn: (trx: Kysely<Tables>) => Promise<number>,
    count: (trx: Kysely<Tables>) => Promise<number>,
  ): Promise<number> {
    // Tells this registration from one a concurrent recount of the same filter put in its place.
    const token = Date.now() * 1_000 + Math.floor(Math.random() * 1_000);
    const registered = await this.register(projectPk, key, shape, token);
    const settled = await this.database.db.transaction().execute(async (trx) => {
      const version = await versionIn(trx);
      const [so] = await this.readQuery.run(trx, { pk: projectPk, key });
      const total = await count(trx);
      return { base: version - Number(so?.adjusted ?? 0), total, shardTotals: total - Number(so?.total ?? 0) };
    });
    if (!registered) return settled.total;
    await this.settle(projectPk, key, token, settled).catch((e) => {
      // Left "counting": the next reader counts again. Anything but a lost lock race is a real error.
      if (!this.database.dialect.errors.isDeadlock(e)) throw e;
    });
    return settled.total;
  }

  /**
   * Puts a registration in "counting" state (base -1) so that writers account for it from now on;
   * false when a concurrent writer won a lock race (the caller then counts without registering).
   */
  private async register(projectPk: number, key: string, shape: WatchedShape, token: number): Promise<boolean> {
    try {
      await this.insertRegistration(projectPk, key, shape, token);
      return true;
    } catch (e) {
      if (this.database.dialect.errors.isDeadlock(e)) return false;
      throw e;
    }
  }

  private async settle(projectPk: number, key: string, token: number, settled: { base: number; shardTotals: number }): Promise<void> {
    await this.database.db
      .updateTable('filter_totals')
      .set({ base_version: settled.base, total: settled.shardTotals })
      .where('project_pk', '=', projectPk)
      .where('filter_key', '=', key)
      .where('shard', '=', 0)
      .where('used_at', '=', token)
      .execute();
  }

  private async insertRegistration(projectPk: number, key: string, shape: WatchedShape, token: number): Promise<void> {
    await this.database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('filter_totals').where('project_pk', '=', projectPk).where('filter_key', '=', key).execute();
      await trx
        .insertInto('filter_totals')
        .values({
          project_pk: projectPk,
          filter_key: key,
          shard: 0,
          shape: JSON.stringify(shape),
          base_version: -1,
          total: 0,
          adjusted: 0,
          used_at: token,
        })
        .execute();
      const older = await trx
        .selectFrom('filter_totals')
        .select('filter_key')
        .where('project_pk', '=', projectPk)
        .where('shard', '=', 0)
        .orderBy('used_at', 'desc')
        .offset(MAX_WATCHED)
        .limit(1_000)
        .execute();
      if (older.length) {
        const keys = older.map((o) => o.filter_key);
        await trx.deleteFrom('filter_totals').where('project_pk', '=', projectPk).where('filter_key', 'in', keys).execute();
      }
    });
  }

  /** The project's registered filters, read in a write's transaction. */
  async watched(trx: Kysely<Tables>, projectPk: number): Promise<Watched[]> {
    const rows = await this.watchedQuery.run(trx, { pk: projectPk });
    return rows.map((r) => ({ key: r.filter_key, projectPk, ...(JSON.parse(r.shape ?? '{}') as WatchedShape) }));
  }

  /** In the write's transaction: each accounted total moves by its delta, and counts one more write. */
  async adjust(trx: Kysely<Tables>, projectPk: number, deltas: Map<string, number>): Promise<void> {
    if (deltas.size === 0) return;
    const shard = 1 + Math.floor(Math.random() * ADJUST_SHARDS);
    const values = [...deltas].map(([key, delta]) => ({
      project_pk: projectPk,
      filter_key: key,
      shard,
      shape: null,
      base_version: 0,
      total: delta,
      adjusted: 1,
      used_at: 0,
    }));
    await this.database.dialect
      .upsert(trx.insertInto('filter_totals').values(values), ['project_pk', 'filter_key', 'shard'], (inserted) => ({
        total: sql`total + ${inserted('total')}`,
        adjusted: sql`adjusted + 1`,
      }))
      .execute();
  }
}
