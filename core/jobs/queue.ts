/** A unit of background work. Handlers must be idempotent: delivery is at least once. */
export interface Job<P = unknown> {
  id: string;
  type: string;
  payload: P;
  attempt: number;
}

export type JobHandler = (job: Job) => Promise<void>;

/** The job queue door (DESIGN.md §1). In-process for the embedded default; Redis Streams to scale out. */
export interface JobQueue {
  enqueue(type: string, payload: unknown): Promise<string>;
  /** Starts consuming with these handlers, at most `concurrency` jobs at once. */
  consume(handlers: Record<string, JobHandler>, options: { concurrency: number }): void;
  /** Resolves when no job is waiting or running (used by tests and graceful shutdown). */
  drain(): Promise<void>;
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}
