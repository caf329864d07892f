import { newId } from '../../core/ids.ts';
import { FairLanes, mayStart, TenantCounts } from '../../core/jobs/fair-share.ts';
import {
  type ConsumeOptions,
  type DeadJob,
  type EnqueueOptions,
  type Job,
  type JobHandlers,
  type JobQueue,
  newWorkerId,
  type QueueOptions,
  type QueueStats,
} from '../../core/ports/queue.ts';
import { type AttemptOutcome, type RetryPolicy, retryPolicy, runAttempt } from '../../core/jobs/retry-policy.ts';
import { log } from '../../core/log.ts';
import { JobCounters } from '../../core/jobs/job-counters.ts';

interface Entry {
  job: Job;
  enqueuedAt: number;
}

/** Outbox job ids the in-process queue remembers, to take each once. */
const HANDED_OVER_MAX = 100_000;

interface Running {
  entry: Entry;
  controller: AbortController;
}

/**
 * The embedded default queue: jobs live in memory and run in this process, with the same semantics
 * as the Redis queue (retries with backoff, dead letter, timeouts, concurrency, graceful close).
 * Work queued here is lost if the process dies; set REDIS_URL for durable jobs.
 */
export class InProcessQueue implements JobQueue {
  readonly durable = false;
  readonly workerId: string;
  private readonly policy: RetryPolicy;
  private readonly graceMs: number;
  private readonly deadMaxLength: number;
  /** Waiting jobs, one lane per workspace, taken in turn within each workspace's share (fair-share.ts). */
  private readonly waiting = new FairLanes<Entry>();
  /** Running jobs per workspace. */
  private readonly runningOf = new TenantCounts();
  private readonly share: number;
  /** Outbox job ids already taken (insertion order: oldest first). */
  private readonly handedOver = new Set<string>();
  private readonly delayed = new Map<Entry, ReturnType<typeof setTimeout>>();
  private readonly running = new Set<Running>();
  private readonly dead: DeadJob[] = [];
  private handlers: JobHandlers = {};
  private concurrency = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly counters = new JobCounters();

  constructor(options: QueueOptions = {}) {
    this.workerId = options.workerId ?? newWorkerId();
    this.policy = retryPolicy(options);
    this.graceMs = options.shutdownGraceMs ?? 10_000;
    this.deadMaxLength = options.deadMaxLength ?? 100_000;
    this.share = options.workspaceShare ?? 0.5;
  }

  async enqueue(type: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    if (this.closed) throw new Error('queue is closed');
    if (options.id) {
      if (this.handedOver.has(options.id)) return options.id;
      this.handedOver.add(options.id);
      // Ids are remembered to refuse a repeat; the oldest are forgotten past HANDED_OVER_MAX.
      if (this.handedOver.size > HANDED_OVER_MAX) for (const old of this.handedOver.keys()) if (this.handedOver.delete(old)) break;
    }
    const job: Job = { id: options.id ?? newId(), type, payload, attempt: 1, ...(options.tenant ? { tenant: options.tenant } : {}) };
    const entry: Entry = { job, enqueuedAt: Date.now() };
    this.waiting.push(job.tenant, entry);
    queueMicrotask(() => this.pump());
    return entry.job.id;
  }

  consume(handlers: JobHandlers, options: ConsumeOptions): void {
    this.handlers = handlers;
    this.concurrency = Math.max(0, options.concurrency);
    log.info('job consumer started', { worker: this.workerId, queue: 'in-process', concurrency: this.concurrency });
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.concurrency && this.waiting.size > 0) {
      const entry = this.waiting.take((tenant) =>
        mayStart(this.runningOf.of(tenant), this.running.size, this.concurrency, this.share, tenant),
      );
      if (!entry) break;
      this.start(entry);
    }
    this.notifyIdle();
  }

  private start(entry: Entry): void {
    const run: Running = { entry, controller: new AbortController() };
    this.running.add(run);
    const { job } = entry;
    this.runningOf.add(job.tenant);
    log.debug('job started', this.fields(job));
    runAttempt(this.handlers, job, { workerId: this.workerId, controller: run.controller }, this.policy)
      .then((outcome) => {
        // A job abandoned by close() past its grace period is not settled.
        if (this.running.has(run)) this.settle(entry, outcome);
      })
      .finally(() => {
        // Abandoned by close() past its grace: already counted out.
        if (this.running.delete(run)) this.runningOf.remove(job.tenant);
        this.pump();
      });
  }

  private settle(entry: Entry, outcome: AttemptOutcome): void {
    const { job } = entry;
    if (outcome.kind === 'retry' && this.closed) return;
    this.counters.record(outcome, entry.enqueuedAt, this.fields(job));
    if (outcome.kind === 'done') return;
    if (outcome.kind === 'retry') {
      const next: Entry = { job: { ...job, attempt: job.attempt + 1 }, enqueuedAt: entry.enqueuedAt };
      const timer = setTimeout(() => {
        this.delayed.delete(next);
        this.waiting.push(next.job.tenant, next);
        this.pump();
      }, outcome.delayMs);
      this.delayed.set(next, timer);
      return;
    }
    this.dead.push({
      id: job.id,
      type: job.type,
      payload: job.payload,
      attempts: job.attempt,
      reason: outcome.reason,
      error: outcome.error,
      enqueuedAt: entry.enqueuedAt,
      failedAt: Date.now(),
      worker: this.workerId,
      ...(job.tenant ? { tenant: job.tenant } : {}),
    });
    if (this.dead.length > this.deadMaxLength) this.dead.splice(0, this.dead.length - this.deadMaxLength);
  }

  private fields(job: Job): Record<string, unknown> {
    return { worker: this.workerId, job_id: job.id, type: job.type, attempt: job.attempt };
  }

  private isIdle(): boolean {
    if (this.running.size > 0) return false;
    return this.closed || this.concurrency === 0 || (this.waiting.size === 0 && this.delayed.size === 0);
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async drain(options: { timeoutMs?: number } = {}): Promise<void> {
    if (options.timeoutMs === undefined) return this.idle();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`queue not drained within ${options.timeoutMs} ms`)), options.timeoutMs);
    });
    try {
      await Promise.race([this.idle(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return this.idle();
    this.closed = true;
    for (const timer of this.delayed.values()) clearTimeout(timer);
    const dropped = this.waiting.size + this.delayed.size;
    this.delayed.clear();
    if (dropped > 0) log.warn('in-process queue closed with jobs not run (they are lost)', { worker: this.workerId, jobs: dropped });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), this.graceMs);
    });
    const result = await Promise.race([this.idle(), grace]);
    clearTimeout(timer);
    if (result === 'grace') {
      for (const run of this.running) {
        log.warn('job still running at shutdown, abandoned', this.fields(run.entry.job));
        run.controller.abort(new Error('queue closed'));
      }
      this.running.clear();
      this.runningOf.clear();
      this.notifyIdle();
    }
  }

  async ping(): Promise<void> {}

  async stats(): Promise<QueueStats> {
    return {
      workerId: this.workerId,
      waiting: this.waiting.size,
      delayed: this.delayed.size,
      pending: this.running.size,
      dead: this.dead.length,
      running: this.running.size,
      ...this.counters.snapshot(),
    };
  }

  async listDead(limit = 100): Promise<DeadJob[]> {
    return this.dead.slice(Math.max(0, this.dead.length - limit)).reverse();
  }

  async retryDead(id: string | 'all'): Promise<number> {
    if (this.closed) throw new Error('queue is closed');
    const picked = id === 'all' ? this.dead.splice(0) : this.takeDead(id);
    for (const d of picked) {
      const job: Job = { id: d.id, type: d.type, payload: d.payload, attempt: 1, ...(d.tenant ? { tenant: d.tenant } : {}) };
      this.waiting.push(d.tenant, { job, enqueuedAt: Date.now() });
    }
    if (picked.length > 0) queueMicrotask(() => this.pump());
    return picked.length;
  }

  private takeDead(id: string): DeadJob[] {
    const i = this.dead.findIndex((d) => d.id === id);
    return i < 0 ? [] : this.dead.splice(i, 1);
  }
}
