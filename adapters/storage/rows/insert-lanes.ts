import type { Cell } from '../../../core/model.ts';
import type { JobsOf, OutboxJob } from '../../../core/ports/storage.ts';

/** Inserts of at most this many rows may be written together with others. */
export const COALESCE_MAX_ROWS = 20;
/** Calls written together in one transaction, at most. */
const COALESCE_MAX_CALLS = 200;

type Rows = Record<number, Cell>[];
/** Writes a batch of a lane's rows, storing the jobs its calls start with them; answers their seqs. */
type WriteBatch = (rows: Rows, jobs: JobsOf<number[]> | undefined) => Promise<number[]>;

interface Lane {
  busy: boolean;
  queue: { rows: Rows; jobs?: JobsOf<number[]>; resolve: (seqs: number[]) => void; reject: (e: unknown) => void }[];
}

/**
 * Small inserts into one project that arrive while one is being written wait for it and are then
 * written together, in one transaction (one commit, one fsync, for many API calls). Order is
 * arrival order. A batch shares its fate: if its transaction fails, each of its calls fails.
 */
export class InsertLanes {
  /** Waiting inserts, per lane key (project and column set). */
  private readonly lanes = new Map<string, Lane>();

  /** Queues `rows` (and the jobs they start) on the lane `key`; `write` writes a batch of the lane's calls. */
  insert(key: string, rows: Rows, jobs: JobsOf<number[]> | undefined, write: WriteBatch): Promise<number[]> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { busy: false, queue: [] };
      this.lanes.set(key, lane);
    }
    const waiting = new Promise<number[]>((resolve, reject) => lane.queue.push({ rows, jobs, resolve, reject }));
    if (!lane.busy) void this.drain(key, lane, write);
    return waiting;
  }

  private async drain(key: string, lane: Lane, write: WriteBatch): Promise<void> {
    lane.busy = true;
    while (lane.queue.length) {
      const batch = lane.queue.splice(0, COALESCE_MAX_CALLS);
      try {
        // Each call's jobs are made from its own rows' seqs.
        const jobs = batch.some((w) => w.jobs)
          ? (seqs: number[]) => {
              const all: OutboxJob[] = [];
              let at = 0;
              for (const w of batch) {
                if (w.jobs) all.push(...w.jobs(seqs.slice(at, at + w.rows.length)));
                at += w.rows.length;
              }
              return all;
            }
          : undefined;
        const seqs = await write(
          batch.flatMap((w) => w.rows),
          jobs,
        );
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
