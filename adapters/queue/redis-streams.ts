import type { Redis } from 'ioredis';
import { newId } from '../../core/ids.ts';
import { mayStart, NO_TENANT, TenantCounts } from '../../core/jobs/fair-share.ts';
import {
  type ConsumeOptions,
  type DeadJob,
  type EnqueueOptions,
  type JobHandlers,
  type JobQueue,
  DEDUPE_WINDOW_MS,
  newWorkerId,
  type QueueOptions,
  type QueueStats,
} from '../../core/ports/queue.ts';
import { type AttemptOutcome, type RetryPolicy, retryPolicy, runAttempt } from '../../core/jobs/retry-policy.ts';
import { log } from '../../core/log.ts';
import { withTimeout } from '../../core/time-limit.ts';
import { JobCounters } from '../../core/jobs/job-counters.ts';
import type { RedisTarget } from '../../core/redis-target.ts';
import { describeRedis } from '../redis/redis-client.ts';
import { RedisLinks, sleep } from './redis-connection.ts';
import { ServerIdentity } from './redis-server-id.ts';
import { listDead, retryDead } from './redis-dead-letters.ts';
import { type Envelope, field, parseEnvelope, type Running } from './redis-envelope.ts';
import { addOnce, settleRetry, stats } from './redis-scripts.ts';
import { renewLeases } from './redis-leases.ts';
import { DelayedPromoter } from './redis-delayed.ts';
import { type ReaderHost, StreamReader } from './redis-reader.ts';
import { ensureGroup, forgetConsumer, GROUP, unblockReader } from './redis-group.ts';
import { type SettleHost, settleAttempt } from './redis-settle.ts';

/**
 * The job queue on bare Redis Streams (Redis 6.2+), for scaling out over several processes.
 *
 * Keys (prefix `wfs:jobs` by default):
 *  - `<prefix>:stream`  the queue: one entry per job attempt-series, field `job` = JSON envelope;
 *                       consumer group `workers`; entries are XACKed *and* XDELed when settled, so
 *                       the stream holds exactly the waiting + pending jobs (XADD caps it with MAXLEN ~).
 *  - `<prefix>:delayed` sorted set of retries waiting for their backoff, scored by due time (ms);
 *                       consumers move due ones back into the stream. Durable like the stream.
 *  - `<prefix>:dead`    the dead-letter stream: payload, error, reason, attempts.
 *  - `<prefix>:sent:<id>` marks an outbox job as added (24 h), so that relaying it again adds nothing.
 *
 * Delivery: XREADGROUP BLOCK for new entries; a job whose consumer stopped heart-beating for
 * `visibilityTimeoutMs` is taken over with XAUTOCLAIM, and its delivery count (from XPENDING) adds to
 * the attempt number, so a job that keeps killing its worker is dead-lettered too. A running job's
 * lease is renewed every visibilityTimeout/3 (XCLAIM JUSTID, which does not bump the delivery count),
 * so slow handlers are not taken over; an event loop blocked for longer than the visibility timeout
 * still lets another worker take the job (at-least-once). Settling (ack, retry, dead-letter) is one
 * Lua script each, run only while this consumer still owns the entry: moving to `delayed` or `dead`
 * and the ack happen atomically, so a crash can neither lose a job nor ack an unfinished one.
 */

/** How long a job set aside for its workspace's share waits before it is back in the stream. */
const DEFER_MS = 1_000;
/** An enqueue Redis has not answered by then counts as failed (its job stays in the outbox; a late add is deduplicated). */
const ENQUEUE_TIMEOUT_MS = 2_000;

export class RedisStreamsQueue implements JobQueue {
  readonly durable = true;
  readonly workerId: string;
  private readonly target: RedisTarget;
  private readonly cmd: Redis;
  private reader: StreamReader | undefined;
  private readonly keys: { stream: string; delayed: string; dead: string; sent: string };
  private readonly policy: RetryPolicy;
  private readonly visibilityMs: number;
  private readonly graceMs: number;
  private readonly maxLength: number;
  private readonly deadMaxLength: number;
  private readonly pollMs: number;
  private readonly blockMs: number;
  private handlers: JobHandlers = {};
  private concurrency = 0;
  private readonly running = new Map<string, Running>();
  /** Running jobs per workspace, and the share one may hold (core/jobs/fair-share.ts). */
  private readonly runningOf = new TenantCounts();
  private readonly share: number;
  private slotWaiter: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  /** Moves due retries back into the stream; made when this queue starts consuming. */
  private promoter: DelayedPromoter | undefined;
  private heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  private closing = false;
  /** Set when close() gave up waiting: running jobs are left pending, never acked. */
  private abandoned = false;
  private closed: Promise<void> | undefined;
  private readonly links: RedisLinks;
  /** The server `cmd` is on (its run_id), for the outbox (core/ports/queue.ts, serverId). */
  private readonly identity: ServerIdentity;
  /** Counts lost connections of `cmd`: a command that spanned one may have run before ioredis re-sent it. */
  private cmdGeneration = 0;
  private readonly counters = new JobCounters();
  private readonly settleHost: SettleHost;

  private constructor(target: RedisTarget, options: QueueOptions) {
    this.target = target;
    this.workerId = options.workerId ?? newWorkerId();
    const prefix = options.prefix ?? 'wfs:jobs';
    this.keys = { stream: `${prefix}:stream`, delayed: `${prefix}:delayed`, dead: `${prefix}:dead`, sent: `${prefix}:sent` };
    this.policy = retryPolicy(options);
    this.visibilityMs = Math.max(100, options.visibilityTimeoutMs ?? 30_000);
    this.graceMs = options.shutdownGraceMs ?? 10_000;
    this.maxLength = options.maxLength ?? 1_000_000;
    this.deadMaxLength = options.deadMaxLength ?? 100_000;
    this.pollMs = Math.max(10, options.pollIntervalMs ?? 1000);
    this.blockMs = Math.max(10, options.blockMs ?? 2000);
    this.share = options.workspaceShare ?? 0.5;
    this.links = new RedisLinks(target, this.workerId, () => this.closing);
    this.cmd = this.links.connect({ connectionName: this.workerId });
    this.identity = new ServerIdentity(this.cmd);
    this.settleHost = {
      cmd: this.cmd,
      workerId: this.workerId,
      keys: this.keys,
      deadMaxLength: this.deadMaxLength,
      generation: () => this.cmdGeneration,
      abandoned: () => this.abandoned,
      retryQueued: (delayMs) => this.promoter?.schedule(delayMs),
      connectionTrouble: (e) => this.connectionTrouble(e),
    };
    this.cmd.on('close', () => {
      this.cmdGeneration++;
      if (this.reader) this.reader.recoverOwnPending = true;
    });
  }

  /** Connects, creates the consumer group, and fails if Redis does not answer within `connectTimeoutMs`. */
  static async open(target: RedisTarget, options: QueueOptions = {}): Promise<RedisStreamsQueue> {
    const q = new RedisStreamsQueue(target, options);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    try {
      // INFO refused (an ACL without it) leaves the server unknown: the outbox then keeps jobs but cannot tell a failover.
      const ready = ensureGroup(q.cmd, q.keys.stream).then(() => q.identity.read().catch(() => undefined));
      await withTimeout(ready, timeoutMs, `Redis at ${describeRedis(target)} did not answer within ${timeoutMs} ms`);
    } catch (e) {
      q.cmd.disconnect();
      throw e;
    }
    return q;
  }

  private connectionTrouble(e: unknown): void {
    this.links.trouble(e);
  }

  serverId(): string | undefined {
    return this.identity.current;
  }

  async enqueue(type: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    if (this.closing) throw new Error('queue is closed');
    // Away means away: a command held in ioredis's offline queue would keep a request waiting for
    // seconds; the caller's job waits in the outbox instead.
    if (this.cmd.status !== 'ready') throw new Error('redis is unavailable');
    const env: Envelope = {
      id: options.id ?? newId(),
      type,
      payload: payload ?? null,
      attempt: 1,
      enqueuedAt: Date.now(),
      ...(options.tenant ? { tenant: options.tenant } : {}),
    };
    const job = JSON.stringify(env);
    const sent = options.id
      ? addOnce.run(this.cmd, [this.keys.stream, `${this.keys.sent}:${options.id}`], [this.maxLength, job, DEDUPE_WINDOW_MS])
      : this.cmd.call('XADD', [this.keys.stream, 'MAXLEN', '~', this.maxLength, '*', 'job', job]);
    await withTimeout(sent, ENQUEUE_TIMEOUT_MS, 'redis did not take the job in time');
    return env.id;
  }

  consume(handlers: JobHandlers, options: ConsumeOptions): void {
    if (this.reader) throw new Error('consume() was already called on this queue');
    if (this.closing) throw new Error('queue is closed');
    this.handlers = handlers;
    this.concurrency = Math.max(0, options.concurrency);
    if (this.concurrency === 0) return;
    // Blocking reads get their own connection, so commands (acks, heartbeats) never wait behind them.
    const conn = this.links.connect({ connectionName: `${this.workerId}:read`, maxRetriesPerRequest: null });
    const reader = new StreamReader(this.readerHost(), conn);
    conn.on('close', () => {
      reader.recoverOwnPending = true;
    });
    this.reader = reader;
    log.info('job consumer started', {
      worker: this.workerId,
      queue: 'redis-streams',
      redis: describeRedis(this.target),
      stream: this.keys.stream,
      concurrency: this.concurrency,
      visibility_timeout_ms: this.visibilityMs,
    });
    const leases = { cmd: this.cmd, stream: this.keys.stream, workerId: this.workerId, running: this.running };
    const host = { ...leases, fields: (r: Running) => this.fields(r), connectionTrouble: (e: unknown) => this.connectionTrouble(e) };
    this.heartbeatTimer = setInterval(() => void renewLeases(host), Math.max(20, Math.floor(this.visibilityMs / 3)));
    this.promoter = new DelayedPromoter(this.cmd, this.keys, this.maxLength, this.pollMs, (e) => this.connectionTrouble(e));
    this.promoter.schedule(0);
    this.loopDone = reader.loop();
  }

  // ---- consuming -------------------------------------------------------------------------------

  private get free(): number {
    return this.concurrency - this.running.size;
  }

  private waitForSlot(): Promise<void> {
    return new Promise((resolve) => {
      this.slotWaiter = resolve;
    });
  }

  private wake(): void {
    const w = this.slotWaiter;
    this.slotWaiter = undefined;
    w?.();
  }

  /** What the read loop reads of this queue (redis-reader.ts). */
  private readerHost(): ReaderHost {
    return {
      cmd: this.cmd,
      workerId: this.workerId,
      stream: this.keys.stream,
      visibilityMs: this.visibilityMs,
      blockMs: this.blockMs,
      concurrency: this.concurrency,
      free: () => this.free,
      waitForSlot: () => this.waitForSlot(),
      isRunning: (id) => this.running.has(id),
      runningCount: () => this.running.size,
      closing: () => this.closing,
      start: (id, fields, deliveries) => this.start(id, fields, deliveries),
      connectionTrouble: (e) => this.connectionTrouble(e),
    };
  }

  private start(entryId: string, fields: string[], deliveries: number): void {
    const env = parseEnvelope(field(fields, 'job'));
    if (!env) {
      const raw = field(fields, 'job') ?? '';
      const broken: Envelope = { id: entryId, type: 'unknown', payload: raw, attempt: 1, enqueuedAt: 0 };
      const run = this.track(entryId, broken, 1);
      void this.finish(run, { kind: 'dead', reason: 'invalid_payload', error: 'stream entry is not a job envelope' });
      return;
    }
    const tenant = env.tenant ?? NO_TENANT;
    if (!mayStart(this.runningOf.of(tenant), this.running.size, this.concurrency, this.share, tenant)) {
      void this.setAside(entryId, env);
      return;
    }
    const attempt = env.attempt + deliveries - 1;
    const run = this.track(entryId, env, attempt);
    if (attempt > this.policy.maxAttempts) {
      // Every delivery was taken over after a stall or crash: the job itself may be killing its worker.
      const error = `worker stopped or stalled during the job ${deliveries - 1} time(s)${env.lastError ? `; last error: ${env.lastError}` : ''}`;
      run.job.attempt = attempt - 1;
      void this.finish(run, { kind: 'dead', reason: 'max_attempts', error });
      return;
    }
    log.debug('job started', { ...this.fields(run), entry: entryId });
    void runAttempt(this.handlers, run.job, { workerId: this.workerId, controller: run.controller }, this.policy).then((outcome) =>
      this.finish(run, outcome),
    );
  }

  /**
   * A job of a workspace past its share while only the slot kept for others is free: back to the
   * `delayed` set for DEFER_MS (its attempt unchanged), from where it returns to the stream's end —
   * behind the jobs of other workspaces that came meanwhile.
   */
  private async setAside(entryId: string, env: Envelope): Promise<void> {
    if (this.reader) this.reader.deferredAt = Date.now();
    try {
      const result = await settleRetry.run(
        this.cmd,
        [this.keys.stream, this.keys.delayed],
        [GROUP, this.workerId, entryId, DEFER_MS, JSON.stringify(env)],
      );
      if (result === 1) this.promoter?.schedule(DEFER_MS);
    } catch (e) {
      // Still pending in our name: recovered as our own, or taken over after the visibility timeout.
      if (this.reader) this.reader.recoverOwnPending = true;
      this.connectionTrouble(e);
    }
  }

  private track(entryId: string, env: Envelope, attempt: number): Running {
    const run: Running = {
      entryId,
      env,
      job: { id: env.id, type: env.type, payload: env.payload, attempt, ...(env.tenant ? { tenant: env.tenant } : {}) },
      controller: new AbortController(),
      lost: false,
      settling: false,
    };
    this.running.set(entryId, run);
    this.runningOf.add(env.tenant);
    return run;
  }

  private fields(run: Running): Record<string, unknown> {
    return { worker: this.workerId, job_id: run.job.id, type: run.job.type, attempt: run.job.attempt };
  }

  /** Settles an attempt in Redis (retrying while Redis is away) unless the entry is no longer ours. */
  private async finish(run: Running, outcome: AttemptOutcome): Promise<void> {
    try {
      if (run.lost || this.abandoned) return;
      run.settling = true;
      const result = await settleAttempt(this.settleHost, run, outcome);
      if (result === 'abandoned') return; // shutdown: stays pending
      if (result === 'lost') {
        log.warn('job lease lost to another worker; not acknowledging it', this.fields(run));
        return;
      }
      this.counters.record(outcome, run.env.enqueuedAt, this.fields(run));
    } finally {
      if (this.running.delete(run.entryId)) this.runningOf.remove(run.env.tenant);
      this.wake();
    }
  }

  // ---- shutdown, stats, dead letter ------------------------------------------------------------

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    this.promoter?.stop();
    this.wake();
    const deadline = Date.now() + this.graceMs;
    if (this.reader && this.loopDone) {
      await unblockReader(this.cmd, `${this.workerId}:read`);
      await Promise.race([this.loopDone, sleep(Math.max(0, deadline - Date.now()))]);
    }
    this.reader?.conn.disconnect();
    while (this.running.size > 0 && Date.now() < deadline) await sleep(Math.min(20, Math.max(1, deadline - Date.now())));
    if (this.running.size > 0) {
      this.abandoned = true;
      for (const run of this.running.values()) {
        log.warn('job still running at shutdown; left pending for another worker', this.fields(run));
        run.controller.abort(new Error('queue closed'));
      }
    } else if (this.reader) {
      await forgetConsumer(this.cmd, this.keys.stream, this.workerId);
    }
    clearInterval(this.heartbeatTimer);
    await Promise.race([this.cmd.quit().catch(() => undefined), sleep(1000)]);
    this.cmd.disconnect();
  }

  async drain(options: { timeoutMs?: number } = {}): Promise<void> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const s = await this.stats();
      if (s.waiting + s.delayed + s.pending === 0 && this.running.size === 0) return;
      if (Date.now() >= deadline) throw new Error(`queue not drained within ${options.timeoutMs} ms`);
      await sleep(25);
    }
  }

  async ping(): Promise<void> {
    await this.cmd.ping();
  }

  async stats(): Promise<QueueStats> {
    const [length, pending, delayed, dead] = (await stats.run(
      this.cmd,
      [this.keys.stream, this.keys.delayed, this.keys.dead],
      [GROUP],
    )) as number[];
    return {
      workerId: this.workerId,
      waiting: Math.max(0, (length ?? 0) - (pending ?? 0)),
      delayed: delayed ?? 0,
      pending: pending ?? 0,
      dead: dead ?? 0,
      running: this.running.size,
      ...this.counters.snapshot(),
    };
  }

  listDead(limit = 100): Promise<DeadJob[]> {
    return listDead(this.cmd, this.keys.dead, limit);
  }

  retryDead(id: string | 'all'): Promise<number> {
    return retryDead(this.cmd, this.keys, this.maxLength, id);
  }
}
