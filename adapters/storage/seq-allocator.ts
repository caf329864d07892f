import { sql } from 'kysely';
import type { Database } from './database.ts';

const BLOCK = 128;

/**
 * Hands out row sequence numbers: globally unique, increasing within a process. Blocks are
 * reserved with one short statement outside the row transaction, so concurrent inserts never
 * queue on a counter row (MySQL: LAST_INSERT_ID(expr); SQLite: RETURNING).
 */
export class SeqAllocator {
  private next = 0;
  private end = 0; // exclusive
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly database: Database) {}

  /** `n` consecutive numbers; the first is returned. */
  take(n: number): Promise<number> {
    const run = this.chain.then(async () => {
      if (this.end - this.next >= n) {
        const first = this.next;
        this.next += n;
        return first;
      }
      const size = n >= BLOCK ? n : BLOCK;
      const last = await this.reserve(size); // last reserved value + 1
      const first = last - size;
      this.next = first + n;
      this.end = last;
      return first;
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Reserves `size` values; returns the new `next_value` (one past the reserved range). */
  private async reserve(size: number): Promise<number> {
    const { db, dialect } = this.database;
    if (dialect === 'mysql') {
      const r = await sql`UPDATE id_sequences SET next_value = LAST_INSERT_ID(next_value + ${size}) WHERE name = 'row_seq'`.execute(db);
      if (r.insertId === undefined) throw new Error('row sequence reservation returned no value');
      return Number(r.insertId);
    }
    const r = await sql<{ next_value: number }>`UPDATE id_sequences SET next_value = next_value + ${size} WHERE name = 'row_seq' RETURNING next_value`.execute(db);
    const row = r.rows[0];
    if (!row) throw new Error('row sequence is missing; run migrations');
    return Number(row.next_value);
  }
}
