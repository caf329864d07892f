import type { Config } from '../../core/config.ts';
import type { Storage } from '../../core/ports/storage.ts';
import type { JobQueue } from '../../core/ports/queue.ts';
import type { WorkerStatsBoard } from '../../core/metrics/worker-stats.ts';

/** The parsed flags of one command line. */
export type Flags = Record<string, string | boolean | undefined>;

/** The shared Redis queue and its workers' stats, opened by the composition root for the jobs:* commands. */
export interface JobsAccess {
  queue: JobQueue;
  board: WorkerStatsBoard;
  close(): Promise<void>;
}

/** What a command works on. */
export interface CommandInput {
  values: Flags;
  storage: Storage;
  config: Config;
  /** Opens the shared queue; absent where the caller gives none (the jobs:* commands then say what they need). */
  openJobs?: (config: Config) => Promise<JobsAccess>;
}

/** One `bun run admin` command: its line of the usage text and what it does (one JSON answer). */
export interface AdminCommand {
  usage: string;
  run(input: CommandInput): Promise<unknown>;
}
