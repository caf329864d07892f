import type { Database } from '../database.ts';

const BLOCK = 128;

/**
 * Hands out row sequence numbers: globally unique, increasing within a process. Blocks are
 * reserved with one short statement outside the row transaction, so concurrent inserts never
 * queue on a counter row (the dialect's `sequences.advance`).
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
      const size = Math.max(n, BLOCK);
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
    return this.database.dialect.sequences.advance(this.database.db, 'row_seq', size);
  }
}
