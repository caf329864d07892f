import type { Cell } from '../../../core/model.ts';

/** Inserts of at most this many rows may be written together with others. */
export const COALESCE_MAX_ROWS = 20;
/** Calls written together in one transaction, at most. */
const COALESCE_MAX_CALLS = 200;

type Rows = Record<number, Cell>[];

interface Lane {
  busy: boolean;
  queue: { rows: Rows; resolve: (seqs: number[]) => void; reject: (e: unknown) => void }[];
}

/**
 * Small inserts into one project that arrive while one is being written wait for it and are then
 * written together, in one transaction (one commit, one fsync, for many API calls). Order is
 * arrival order. A batch shares its fate: if its transaction fails, each of its calls fails.
 */
export class InsertLanes {
  /** Waiting inserts, per lane key (project and column set). */
  private readonly lanes = new Map<string, Lane>();

  /** Queues `rows` on the lane `key`; `write` writes a batch of the lane's rows and returns their seqs. */
  insert(key: string, rows: Rows, write: (rows: Rows) => Promise<number[]>): Promise<number[]> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { busy: false, queue: [] };
      this.lanes.set(key, lane);
    }
    const waiting = new Promise<number[]>((resolve, reject) => lane.queue.push({ rows, resolve, reject }));
    if (!lane.busy) void this.drain(key, lane, write);
    return waiting;
  }

  private async drain(key: string, lane: Lane, write: (rows: Rows) => Promise<number[]>): Promise<void> {
    lane.busy = true;
    while (lane.queue.length) {
      const batch = lane.queue.splice(0, COALESCE_MAX_CALLS);
      try {
        const seqs = await write(batch.flatMap((w) => w.rows));
        let at = 0;
        for (const w of batch) {
          w.resolve(seqs.slice(at, at + w.rows.length));
          at += w.rows.length;
        }
      } catch (e) {
        for (const w of batch) w.reject(e);
      }
    }
    lane.busy = false;
    this.lanes.delete(key);
  }
}
