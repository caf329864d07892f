import { type Kysely, sql } from 'kysely';
import type { JobsOf } from '../../../core/ports/storage.ts';
import type { Database } from '../database.ts';
import { storeJobs } from '../job-outbox-repo.ts';
import { chunks, integerList } from '../compiled-queries.ts';
import type { Tables } from '../tables.ts';
import { keyedFrom } from './cell-key-joins.ts';
import { affects, type WriteEffect } from './listing-memory.ts';
import type { RowChanges } from './row-changes.ts';
import type { RowCounters } from './row-counters.ts';
import type { SharedTotals, Watched } from './shared-totals.ts';

/** What the body of a row write works with. */
export interface RowWrite {
  /** The write's transaction. */
  readonly trx: Kysely<Tables>;
  /**
   * Runs `statement`, which adds, removes or updates rows `seqs` (their cell keys), and keeps the
   * remembered totals this write follows exact: the rows are counted against them before a removal
   * or an update (locking what is read) and after an addition or an update.
   */
  change<T>(seqs: number[], kind: 'add' | 'remove' | 'update', statement: () => Promise<T>): Promise<T>;
}

/** What a write's body answers: its result, and whether it changed the project (by how many live rows). */
export type WriteOutcome<T> = { result: T; changed: true; rows: number } | { result: T; changed: false };

/** The body changed the project, adding `rows` live rows (negative: removing them). */
export const changed = <T>(result: T, rows = 0): WriteOutcome<T> => ({ result, changed: true, rows });
/** The body changed nothing: the counter and the remembered listings stay as they are. */
export const unchanged = <T>(result: T): WriteOutcome<T> => ({ result, changed: false });

/**
 * The one way rows are written. In one transaction a write reads the project's shared filtered
 * totals (shared-totals.ts) and measures the rows it changes against those it may move, adds its
 * differences to them, bumps the project's change counter and records what it did in the change
 * log (row-changes.ts), from which every process's remembered listings follow it. `run` owns all
 * of that; the body only writes and says, through its answer, whether anything changed.
 */
export class RowWrites {
  constructor(
    private readonly database: Database,
    private readonly counters: RowCounters,
    private readonly totals: SharedTotals,
    private readonly changes: RowChanges,
  ) {}

  /** `jobs`: the jobs the write starts, stored in the outbox by the same transaction (from its result). */
  async run<T>(projectPk: number, effect: WriteEffect, body: (w: RowWrite) => Promise<WriteOutcome<T>>, jobs?: JobsOf<T>): Promise<T> {
    // Writers of several processes (or nodes) lock the same keys and totals in different orders now
    // and then; the database then rolls one back whole, and the storage's transactions run it again
    // (retrying-kysely.ts): the body keeps nothing between runs.
    const outcome = await this.transaction(projectPk, effect, body, jobs);
    if (outcome.changed) this.changes.pruneNow();
    return outcome.result;
  }

  private transaction<T>(projectPk: number, effect: WriteEffect, body: (w: RowWrite) => Promise<WriteOutcome<T>>, jobs?: JobsOf<T>) {
    return this.database.db.transaction().execute(async (trx) => {
      const watched = await this.totals.watched(trx, projectPk);
      // Totals this write may move are measured; the others only count the write.
      const moved = watched.filter((w) => affects({ ...w, sortCols: [] }, effect).filter);
      const deltas = new Map<string, number>(watched.filter((w) => !moved.includes(w)).map((w) => [w.key, 0]));
      let measuredAll = false;
      const write: RowWrite = {
        trx,
        change: async (seqs, kind, statement) => {
          if (kind !== 'add') await this.measure(trx, moved, deltas, seqs, -1);
          const out = await statement();
          if (kind !== 'remove') await this.measure(trx, moved, deltas, seqs, 1, kind === 'update');
          measuredAll = true;
          return out;
        },
      };
      const out = await body(write);
      if (out.changed) {
        // A body that changed rows without saying which cannot move the totals it may touch: they fall behind and are counted again.
        if (!measuredAll) for (const w of moved) deltas.delete(w.key);
        await this.totals.adjust(trx, projectPk, deltas);
        await this.counters.bump(trx, projectPk, out.rows);
        await this.changes.record(trx, projectPk, effect);
      }
      if (jobs) await storeJobs(trx, jobs(out.result));
      return out;
    });
  }

  /**
   * Adds to each moved total the matches among `seqs`, times `sign` (-1 before changing them, +1
   * after). Before-counts lock the keys they read (the dialect's locked read), so they see the
   * latest committed values, as the write itself will. After an update the count is a locked read
   * too: a plain read sees the transaction's snapshot, older than the before-count for the cells
   * this write did not touch — another writer's change to another column of the same rows, committed
   * meanwhile, would then be counted on one side only, and the total drift for good.
   */
  private async measure(
    trx: Kysely<Tables>,
    moved: Watched[],
    deltas: Map<string, number>,
    seqs: number[],
    sign: 1 | -1,
    latest = false,
  ): Promise<void> {
    if (moved.length === 0 || seqs.length === 0) return;
    const locked = sign === -1 || latest;
    for (const part of chunks(seqs, this.database.dialect.limits.inListSize)) {
      // Counts of rows this write added lock nothing (no one else sees them yet), so every filter is
      // counted in one statement; locked counts go one filter at a time.
      const counts = locked ? [] : await this.matchesOfEach(trx, moved, part);
      if (locked) for (const w of moved) counts.push(await this.matchesAmong(trx, w, part, true));
      moved.forEach((w, i) => {
        deltas.set(w.key, (deltas.get(w.key) ?? 0) + sign * (counts[i] ?? 0));
      });
    }
  }

  /** For each filter, how many of `seqs` it matches: one statement of scalar subqueries. */
  private async matchesOfEach(trx: Kysely<Tables>, moved: Watched[], seqs: number[]): Promise<number[]> {
    const { dialect } = this.database;
    const counts = moved.map((w, i) => {
      const { from, d } = keyedFrom(dialect, w.projectPk, w.filterCols, w.filter);
      return sql`(SELECT COUNT(*) ${from} AND ${sql.ref(`${d}.seq`)} IN ${integerList(seqs)}) AS ${sql.ref(`c${i}`)}`;
    });
    const r = await sql<Record<string, number>>`SELECT ${sql.join(counts)}`.execute(trx);
    const row = r.rows[0] ?? {};
    return moved.map((_, i) => Number(row[`c${i}`] ?? 0));
  }

  private async matchesAmong(trx: Kysely<Tables>, w: Watched, seqs: number[], lock: boolean): Promise<number> {
    if (seqs.length === 0) return 0;
    const { dialect } = this.database;
    const { from, d } = keyedFrom(dialect, w.projectPk, w.filterCols, w.filter);
    const r = await sql<{
      n: number;
    }>`SELECT COUNT(*) AS n ${from} AND ${sql.ref(`${d}.seq`)} IN ${integerList(seqs)} ${lock ? dialect.locking.lockClause : sql``}`.execute(
      trx,
    );
    return Number(r.rows[0]?.n ?? 0);
  }
}
