import type { QueueStats } from '../ports/queue.ts';

/**
 * Where each process's queue counters meet, so the REST host's /metrics can show every worker
 * (worker processes open no port). In-process: this process only; Redis: every live process.
 */
export interface WorkerStatsBoard {
  /** Records this process's counters (called every few seconds by every process that consumes). */
  publish(stats: QueueStats): Promise<void>;
  /** The latest counters of every live process, this one included. */
  all(): Promise<QueueStats[]>;
  close(): Promise<void>;
}
