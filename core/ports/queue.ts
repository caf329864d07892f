import { hostname } from 'node:os';
import type { TSchema } from '@sinclair/typebox';

/** A unit of background work. Handlers must be idempotent: delivery is at least once. */
export interface Job<P = unknown> {
  /** Stable across retries and re-drives (UUID v7). */
  id: string;
  type: string;
  payload: P;
  /** 1 on the first delivery; a retry, a timed-out attempt or a take-over after a crash adds one. */
  attempt: number;
  /** The workspace it works for, when known: no workspace holds more than its share of the slots while others wait. */
  tenant?: string;
}

/** What a handler gets beside its job. */
export interface JobContext {
  /** Aborted when the attempt times out (`jobTimeoutMs`), the queue closes past its grace period, or the job's lease is lost. */
  signal: AbortSignal;
  /** The consumer running the job (hostname-pid-random), for logs. */
  workerId: string;
  /** No attempt follows this one (JOB_MAX_ATTEMPTS reached): a retryable failure settles now instead. */
  lastAttempt: boolean;
}

export type JobHandler = (job: Job, ctx: JobContext) => Promise<void>;

/**
 * A handler with an optional TypeBox schema of its payload. A payload that fails the schema is a
 * permanent failure: the job goes to the dead letter at once with the reason, and is never retried.
 */
export interface JobRegistration {
  handler: JobHandler;
  payloadSchema?: TSchema;
}

export type JobHandlers = Record<string, JobHandler | JobRegistration>;

/**
 * How a handler says whether a failure is worth retrying. Any error object with `retryable: false`
 * (e.g. ProviderError for a 4xx) is permanent; `retryable: true` (429, 5xx, timeout) or no flag at all
 * (as BullMQ does) is retried with backoff until `maxAttempts`. `retryAfterMs`, when set, is a floor
 * on the next delay (e.g. a provider's Retry-After), spread up to a fifth more, never past `maxRetryDelayMs`.
 */
export class JobError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: { retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'JobError';
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A failure that no retry can fix (bad input, missing record, 4xx): dead-lettered at once. */
export const permanentError = (message: string, cause?: unknown): JobError => new JobError(message, { retryable: false, cause });
/** A failure worth retrying later (429, 5xx, timeout). */
export const retryableError = (message: string, retryAfterMs?: number): JobError =>
  new JobError(message, { retryable: true, retryAfterMs });

/** Why a job ended in the dead letter. */
export type DeadReason = 'permanent_error' | 'max_attempts' | 'no_handler' | 'invalid_payload';

/** A job in the dead letter, as `listDead` answers it. */
export interface DeadJob {
  id: string;
  type: string;
  payload: unknown;
  /** Attempts made before it was dead-lettered. */
  attempts: number;
  reason: DeadReason;
  /** The last error message. */
  error: string;
  /** ms since epoch. */
  enqueuedAt: number;
  failedAt: number;
  /** Consumer that dead-lettered it. */
  worker: string;
  /** The workspace it worked for, when known (a re-driven job keeps it). */
  tenant?: string;
}

/** Counters for /metrics. On Redis the queue figures come from Redis, so every process sees the same. */
export interface QueueStats {
  /** This process's consumer id. */
  workerId: string;
  /** Jobs not yet delivered to any worker (queue depth). */
  waiting: number;
  /** Retries waiting for their backoff delay. */
  delayed: number;
  /** Delivered to a worker and not yet acknowledged (running, or held by a worker that died). */
  pending: number;
  /** Jobs in the dead letter now. */
  dead: number;
  /** This process: jobs running now. */
  running: number;
  /** This process: jobs completed since start. */
  processed: number;
  /** This process: failed attempts since start (retried or dead-lettered). */
  failed: number;
  /** This process: jobs it moved to the dead letter since start. */
  deadLettered: number;
  /** This process: enqueue→done time of its completed jobs. */
  latency: { count: number; sumMs: number; maxMs: number };
}

/** `id`: an outbox job's (queued once); `tenant`: the workspace the job works for. */
export interface EnqueueOptions {
  id?: string;
  tenant?: string;
}

export interface ConsumeOptions {
  /** At most this many jobs run at once in this process. */
  concurrency: number;
}

/** The job queue door (docs/architecture.md). In-process for the embedded default; Redis Streams to scale out. */
export interface JobQueue {
  /** Consumer id of this process (hostname-pid-random), named on every job log line. */
  readonly workerId: string;
  /** Whether queued jobs outlive this process (Redis) or die with it (in-process). */
  readonly durable: boolean;
  /**
   * Queues a job and answers its id. Durable once resolved (Redis). Given an `id` (an outbox job's),
   * a second enqueue of that id queues nothing (Redis: for `DEDUPE_WINDOW_MS`), so a relay that
   * repeats itself never runs a job twice. Rejects at once while Redis is away.
   */
  enqueue(type: string, payload: unknown, options?: EnqueueOptions): Promise<string>;
  /**
   * A durable queue whose server may lose the writes it acknowledged last (Redis: replication to the
   * replica a Sentinel failover promotes is asynchronous) answers which server holds it now (Redis: its
   * run_id; undefined until known). The outbox keeps what it handed over for a while and hands it over
   * again when this changes (core/jobs/outbox-relay.ts); ids make that repeat harmless.
   */
  serverId?(): string | undefined;
  /** Starts consuming with these handlers, at most `concurrency` jobs at once. Call once. */
  consume(handlers: JobHandlers, options: ConsumeOptions): void;
  /**
   * Resolves when no job is waiting, delayed or running. In-process: when this process has nothing
   * left (at once when it does not consume). Redis: when the shared queue is empty, whoever consumes it.
   */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  /**
   * Stops taking jobs and waits for the running ones up to the grace period; then aborts their
   * signals. On Redis an unfinished job is never acknowledged: it stays pending and another worker
   * takes it over after the visibility timeout.
   */
  close(): Promise<void>;
  stats(): Promise<QueueStats>;
  /** Rejects when the queue's server does not answer (Redis); the in-process queue always answers. */
  ping(): Promise<void>;
  /** The newest dead-lettered jobs first. */
  listDead(limit?: number): Promise<DeadJob[]>;
  /** Puts dead jobs back on the queue with a fresh attempt count; answers how many were re-driven. */
  retryDead(id: string | 'all'): Promise<number>;
}

/** Tuning shared by both implementations (docs/api.md). */
export interface QueueOptions {
  /** Attempts before a job goes to the dead letter (default 5). */
  maxAttempts?: number;
  /** Exponential backoff between attempts: base * 2^(attempt-1), capped, with jitter (core/jobs/retry-policy.ts). */
  backoff?: { baseMs?: number; maxMs?: number; jitter?: number };
  /**
   * The longest a failure's `retryAfterMs` (a provider's Retry-After) may hold its retry back
   * (JOB_MAX_RETRY_DELAY_MS, default 10 min): a provider asking for more is retried after this.
   */
  maxRetryDelayMs?: number;
  /** Time limit of one attempt; on expiry the signal aborts and the attempt fails as retryable (default 15 min; 0 = none). */
  jobTimeoutMs?: number;
  /** close(): how long running jobs may take to finish (default 10 s). */
  shutdownGraceMs?: number;
  /** Redis: a delivered job idle this long is taken over by another worker (JOB_VISIBILITY_TIMEOUT_MS, default 30 s). */
  visibilityTimeoutMs?: number;
  /** Redis: key prefix (default `wfs:jobs`); keys are `<prefix>:stream`, `<prefix>:delayed`, `<prefix>:dead`. */
  prefix?: string;
  /** Redis: approximate cap (`MAXLEN ~`) of the job stream (default 1,000,000) and of the dead stream (default 100,000). */
  maxLength?: number;
  deadMaxLength?: number;
  /** Redis: openQueue fails if Redis does not answer within this time (default 10 s). */
  connectTimeoutMs?: number;
  /** Redis: how often consumers move due retries back to the stream (default 1 s). */
  pollIntervalMs?: number;
  /** Redis: longest XREADGROUP BLOCK (default 2 s). */
  blockMs?: number;
  /** Overrides the generated consumer id (tests). */
  workerId?: string;
  /**
   * JOB_WORKSPACE_SHARE (default 0.5): the part of a process's job slots one workspace may hold at
   * once; past it, idle slots but the last one (core/jobs/fair-share.ts).
   */
  workspaceShare?: number;
}

/** How long a queue remembers the id of a job it was handed, to refuse it a second time (24 h). */
export const DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A consumer id unique across processes and restarts: hostname-pid-random. */
export function newWorkerId(): string {
  return `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
