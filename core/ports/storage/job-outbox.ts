/** A job a write starts, kept in the job outbox until the queue has it (docs/scaling.md: Redis away loses nothing). */
export interface OutboxJob {
  /** The job's id on the queue too, so that handing it over twice runs it once. */
  id: string;
  type: string;
  payload: unknown;
  /** The workspace it works for: queues share their slots fairly between workspaces. */
  tenant?: string;
}

/**
 * The jobs a write starts, made from what it wrote (the rows' seqs, the project) inside its
 * transaction, which stores them in the outbox: the work and its jobs commit together or not at all.
 */
export type JobsOf<R> = (written: R) => OutboxJob[];

/**
 * Jobs that committed writes started and no queue has taken yet (core/jobs/job-outbox.ts relays them),
 * and, on a queue whose server may lose its latest writes, those it took lately (core/jobs/outbox-relay.ts).
 */
export interface JobOutboxRepo {
  /** Jobs no queue has taken, stored at least `olderThanMs` ago, oldest first. */
  due(olderThanMs: number, limit: number): Promise<OutboxJob[]>;
  /** Forgets jobs the queue has taken. */
  remove(ids: string[]): Promise<void>;
  /** Records that the queue on server `serverId` took these jobs; they are kept until `forgetHanded`. */
  markHanded(ids: string[], serverId: string): Promise<void>;
  /** Jobs taken by a queue server other than `serverId` at most `withinMs` ago, oldest first. */
  handedElsewhere(serverId: string, withinMs: number, limit: number): Promise<OutboxJob[]>;
  /** Forgets jobs a queue took more than `olderThanMs` ago; answers how many. */
  forgetHanded(olderThanMs: number): Promise<number>;
  /** Jobs waiting in the outbox, not taken by a queue yet (for /metrics). */
  depth(): Promise<number>;
  /** Forgets every job; answers how many. */
  clear(): Promise<number>;
}
