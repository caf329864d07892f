import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.ts';
import { reusableQuery } from '../compiled-queries.ts';
import type { Tables } from '../tables.ts';

/** Counter shards per project: concurrent inserts rarely touch the same counter record. */
const COUNT_SHARDS = 64;

/**
 * `project_row_counts`: each project's live rows (`n`) and change counter (`v`), summed over its
 * shards. Row counts never need COUNT(*); the change counter tells a process whether what it
 * remembers about a project's listings still stands (listing-memory.ts).
 */
export class RowCounters {
  /** Both run on every write and every page: compiled once. */
  private readonly bumpQuery;
  private readonly readQuery;
  private readonly stateQuery;

  constructor(private readonly database: Database) {
    const { db, dialect } = database;
    this.bumpQuery = reusableQuery(['pk', 'shard', 'delta'], (v) =>
      dialect.upsert(
        db.insertInto('project_row_counts').values({ project_pk: v('pk'), shard: v('shard'), n: v('delta'), v: 1 }),
        ['project_pk', 'shard'],
        () => ({
          n: sql<number>`n + ${v('delta')}`,
          v: sql`v + 1`,
        }),
      ),
    );
    this.readQuery = reusableQuery(['pk'], (v) =>
      db
        .selectFrom('project_row_counts')
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<number>('n'), eb.lit(0)).as('n'),
          eb.fn.coalesce(eb.fn.sum<number>('v'), eb.lit(0)).as('v'),
        ])
        .where('project_pk', '=', v('pk')),
    );
    // One statement, so one snapshot: the counter and the change log agree.
    this.stateQuery = reusableQuery(['pk'], (v) =>
      db
        .selectFrom('project_row_counts')
        .select((eb) => [
          eb.fn.coalesce(eb.fn.sum<number>('n'), eb.lit(0)).as('n'),
          eb.fn.coalesce(eb.fn.sum<number>('v'), eb.lit(0)).as('v'),
          eb
            .selectFrom('row_changes')
            .select((c) => c.fn.max<number>('id').as('c'))
            .where('project_pk', '=', v('pk'))
            .as('c'),
        ])
        .where('project_pk', '=', v('pk')),
    );
  }

  /** Adds `delta` live rows and one change, on a random shard, in the write's transaction. */
  async bump(trx: Kysely<Tables>, projectPk: number, delta: number): Promise<void> {
    await this.bumpQuery.run(trx, { pk: projectPk, shard: Math.floor(Math.random() * COUNT_SHARDS), delta });
  }

  /** The live row count and change counter of a project, in one read (in `db`: a transaction's snapshot). */
  async countAndVersion(projectPk: number, db: Kysely<Tables> = this.database.db): Promise<{ rows: number; version: number }> {
    const [r] = await this.readQuery.run(db, { pk: projectPk });
    return { rows: Number(r?.n ?? 0), version: Number(r?.v ?? 0) };
  }

  /** The live row count, change counter and newest change log id of a project, read together (listing-memory.ts). */
  async state(projectPk: number): Promise<{ rows: number; version: number; changeId: number }> {
    const [r] = await this.stateQuery.run(this.database.db, { pk: projectPk });
    return { rows: Number(r?.n ?? 0), version: Number(r?.v ?? 0), changeId: Number(r?.c ?? 0) };
  }

  /** Live row counts of several projects. */
  async counts(projectPks: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>(projectPks.map((pk) => [pk, 0]));
    if (projectPks.length === 0) return out;
    const rows = await this.database.db
      .selectFrom('project_row_counts')
      .select(['project_pk', (eb) => eb.fn.sum<number>('n').as('n')])
      .where('project_pk', 'in', projectPks)
      .groupBy('project_pk')
      .execute();
    for (const r of rows) out.set(Number(r.project_pk), Number(r.n));
    return out;
  }
}
