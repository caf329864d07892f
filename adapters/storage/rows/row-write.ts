import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.ts';
import { chunks } from '../compiled-queries.ts';
import type { Tables } from '../tables.ts';
import { keyedFrom } from './cell-key-joins.ts';
import { type Entry, ListingMemory, type WriteEffect, type WriteTicket } from './listing-memory.ts';
import type { RowCounters } from './row-counters.ts';

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
 * The one way rows are written. A write must, in order: announce itself to this process's listing
 * memory, open a transaction, measure the rows it changes against the remembered totals it
 * follows, bump the project's change counter (so other processes forget what they remember), commit,
 * and only then let the memory follow the write. `run` owns all of that; the body only writes and
 * says, through its answer, whether anything changed.
 */
export class RowWrites {
  constructor(
    private readonly database: Database,
    private readonly memory: ListingMemory,
    private readonly counters: RowCounters,
  ) {}

  async run<T>(projectPk: number, effect: WriteEffect, body: (w: RowWrite) => Promise<WriteOutcome<T>>): Promise<T> {
    const ticket = this.memory.beginWrite(projectPk, effect);
    const outcome = await this.database.db.transaction().execute(async (trx) => {
      const write: RowWrite = {
        trx,
        change: async (seqs, kind, statement) => {
          if (kind !== 'add') await this.measure(trx, ticket, seqs, -1);
          const out = await statement();
          if (kind !== 'remove') await this.measure(trx, ticket, seqs, 1);
          return out;
        },
      };
      const out = await body(write);
      if (out.changed) await this.counters.bump(trx, projectPk, out.rows);
      return out;
    });
    // Committed: the memory follows the write (never for a write that did not commit or change anything).
    if (outcome.changed) this.memory.endWrite(ticket);
    return outcome.result;
  }

  /**
   * Adds to each total the write keeps exact the matches among `seqs`, times `sign` (-1 before
   * changing them, +1 after). Before-counts lock the keys they read (the dialect's locked read), so
   * they see the latest committed values, as the write itself will.
   */
  private async measure(trx: Kysely<Tables>, ticket: WriteTicket, seqs: number[], sign: 1 | -1): Promise<void> {
    for (const e of ticket.measured) {
      let n = 0;
      for (const part of chunks(seqs, this.database.dialect.limits.inListSize)) n += await this.matchesAmong(trx, e, part, sign === -1);
      ListingMemory.measure(ticket, e, sign * n);
    }
  }

  private async matchesAmong(trx: Kysely<Tables>, e: Entry, seqs: number[], lock: boolean): Promise<number> {
    if (seqs.length === 0 || !e.filter) return 0;
    const { dialect } = this.database;
    const { from, d } = keyedFrom(dialect, e.projectPk, e.filterCols, e.filter);
    const r = await sql<{
      n: number;
    }>`SELECT COUNT(*) AS n ${from} AND ${sql.ref(`${d}.seq`)} IN (${sql.join(seqs)}) ${lock ? dialect.locking.lockClause : sql``}`.execute(
      trx,
    );
    return Number(r.rows[0]?.n ?? 0);
  }
}
