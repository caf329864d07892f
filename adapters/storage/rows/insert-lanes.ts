import type { Cell } from '../../../core/model.ts';
import type { JobsOf, OutboxJob } from '../../../core/ports/storage.ts';

/** Inserts of at most this many rows may be written together with others. */
export const COALESCE_MAX_ROWS = 20;
/** Calls written together in one transaction, at most. */
const COALESCE_MAX_CALLS = 200;

type Rows = Record<number, Cell>[];
/** Unique keys of the rows (null: none), when the project has them. */
type Keys = (string | null)[] | undefined;
/** Writes a batch of a lane's rows (with their keys), storing the jobs its calls start with them; answers their seqs. */
type WriteBatch = (rows: Rows, jobs: JobsOf<number[]> | undefined, keys: Keys) => Promise<number[]>;

interface Call {
  rows: Rows;
  jobs?: JobsOf<number[]>;
  keys: Keys;
  resolve: (seqs: number[]) => void;
  reject: (e: unknown) => void;
}

interface Lane {
  busy: boolean;
  queue: Call[];
}

/**
 * Small inserts into one project that arrive while one is being written wait for it and are then
 * written together, in one transaction (one commit, one fsync, for many API calls). Order is
 * arrival order. When a batch of several calls fails, each call is written again alone, so one
 * call's failure (a unique key another write took, two calls with the same key) is its own only.
 */
export class InsertLanes {
  /** Waiting inserts, per lane key (project and column set). */
  private readonly lanes = new Map<string, Lane>();

  /** Queues `rows` (and the jobs they start) on the lane `key`; `write` writes a batch of the lane's calls. */
  insert(key: string, rows: Rows, jobs: JobsOf<number[]> | undefined, keys: Keys, write: WriteBatch): Promise<number[]> {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { busy: false, queue: [] };
      this.lanes.set(key, lane);
    }
    const waiting = new Promise<number[]>((resolve, reject) => lane.queue.push({ rows, jobs, keys, resolve, reject }));
    if (!lane.busy) void this.drain(key, lane, write);
    return waiting;
  }

  private async drain(key: string, lane: Lane, write: WriteBatch): Promise<void> {
    lane.busy = true;
    while (lane.queue.length) {
      const batch = lane.queue.splice(0, COALESCE_MAX_CALLS);
      try {
        const seqs = await writeTogether(batch, write);
        let at = 0;
        for (const w of batch) {
          w.resolve(seqs.slice(at, at + w.rows.length));
          at += w.rows.length;
        }
      } catch (e) {
        if (batch.length === 1) (batch[0] as Call).reject(e);
        else for (const w of batch) await writeTogether([w], write).then(w.resolve, w.reject);
      }
    }
    lane.busy = false;
    this.lanes.delete(key);
  }
}

/** One write of the calls' rows, keys and jobs (each call's jobs made from its own rows' seqs). */
function writeTogether(batch: Call[], write: WriteBatch): Promise<number[]> {
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
  const keys = batch.some((w) => w.keys) ? batch.flatMap((w) => w.keys ?? w.rows.map(() => null)) : undefined;
  return write(
    batch.flatMap((w) => w.rows),
    jobs,
    keys,
  );
}
