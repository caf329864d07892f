import { createHash } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { newId } from '../../core/ids.ts';
import { mayStart, NO_TENANT } from '../../core/jobs/fair-share.ts';
import {
  type ConsumeOptions,
  type DeadJob,
  type DeadReason,
  type EnqueueOptions,
  type Job,
  type JobHandlers,
  type JobQueue,
  DEDUPE_WINDOW_MS,
  newWorkerId,
  type QueueOptions,
  type QueueStats,
} from '../../core/ports/queue.ts';
import { type AttemptOutcome, type RetryPolicy, retryPolicy, runAttempt } from '../../core/jobs/retry-policy.ts';
import { log, redactUrl } from '../../core/log.ts';
import { withTimeout } from '../../core/time-limit.ts';

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

const GROUP = 'workers';
/** How long a job set aside for its workspace's share waits before it is back in the stream. */
const DEFER_MS = 1_000;
/** After setting a job aside, reading pauses this long while only the slot kept for others is free. */
const DEFER_PAUSE_MS = 250;
/** An enqueue Redis has not answered by then counts as failed (its job stays in the outbox; a late add is deduplicated). */
const ENQUEUE_TIMEOUT_MS = 2_000;

/** What a stream entry and a `delayed` member hold. */
interface Envelope {
  id: string;
  type: string;
  payload: unknown;
  /** Attempt number of the first delivery of this entry. */
  attempt: number;
  enqueuedAt: number;
  lastError?: string;
  /** The workspace it works for (fair shares, core/jobs/fair-share.ts). */
  tenant?: string;
}

interface Running {
  entryId: string;
  job: Job;
  env: Envelope;
  controller: AbortController;
  /** Set when the entry turns out to be owned by another consumer: we must not settle it. */
  lost: boolean;
  /** Its ack/retry/dead-letter is on the way: a heartbeat finding it gone is no news. */
  settling: boolean;
}

// ---- Lua scripts -----------------------------------------------------------------------------

const OWNED = `
-- 1: pending and ours; 0: not pending (settled already); -1: pending at another consumer.
local function owner(stream, group, id, consumer)
  local p = redis.call('XPENDING', stream, group, id, id, 1)
  if p[1] == nil then return 0 end
  if p[1][2] == consumer then return 1 end
  return -1
end
local function owned(stream, group, id, consumer)
  return owner(stream, group, id, consumer) == 1
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

class LuaScript {
  private readonly sha: string;
  constructor(private readonly lua: string) {
    this.lua = OWNED + lua;
    this.sha = createHash('sha1').update(this.lua).digest('hex');
  }
  async run(conn: Redis, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await conn.call('EVALSHA', [this.sha, keys.length, ...keys, ...args]);
    } catch (e) {
      if (!String((e as Error).message).startsWith('NOSCRIPT')) throw e;
      return conn.call('EVAL', [this.lua, keys.length, ...keys, ...args]);
    }
  }
}

/**
 * The settle scripts run only while we own the entry, so a command re-sent after a lost reply is
 * harmless. Answer 1 = settled, 0 = not pending any more, -1 = owned by another consumer.
 */

/**
 * An outbox job, added once: the first hand-over of its id marks it sent (for ARGV[3] ms) and adds
 * it; a repeat (a relay whose delete was lost, two processes relaying at once) adds nothing.
 * KEYS stream, sent marker; ARGV max length, job, marker ttl ms.
 */
const addOnce = new LuaScript(`
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'job', ARGV[2])
return 1`);

/** KEYS stream; ARGV group, consumer, entry id. */
const settleDone = new LuaScript(`
local o = owner(KEYS[1], ARGV[1], ARGV[3], ARGV[2])
if o ~= 1 then return o end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`);

/** KEYS stream, delayed; ARGV group, consumer, entry id, delay ms, next envelope. */
const settleRetry = new LuaScript(`
local o = owner(KEYS[1], ARGV[1], ARGV[3], ARGV[2])
if o ~= 1 then return o end
redis.call('ZADD', KEYS[2], now_ms() + tonumber(ARGV[4]), ARGV[5])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`);

/** KEYS stream, dead; ARGV group, consumer, entry id, dead max length, field, value, ... */
const settleDead = new LuaScript(`
local o = owner(KEYS[1], ARGV[1], ARGV[3], ARGV[2])
if o ~= 1 then return o end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', unpack(ARGV, 5))
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`);

/** KEYS delayed, stream; ARGV max length, batch. Answers {moved, ms until the next is due or -1}. */
const promote = new LuaScript(`
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(due) do
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'job', m)
  redis.call('ZREM', KEYS[1], m)
end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = -1
if nxt[2] then wait = math.max(0, math.floor(tonumber(nxt[2]) - now)) end
return {#due, wait}`);

/** KEYS stream; ARGV group, consumer, min idle ms, cursor, count. Answers {cursor, {{id, fields, deliveries}...}}. */
const claim = new LuaScript(`
local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', ARGV[5])
local out = {}
for _, e in ipairs(r[2]) do
  if type(e) == 'table' and type(e[2]) == 'table' then
    local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
    local n = 1
    if p[1] then n = p[1][4] end
    table.insert(out, {e[1], e[2], n})
  end
end
return {r[1], out}`);

/** KEYS stream; ARGV group, consumer, count. Entries pending in this consumer's name: {{id, fields, deliveries}...}. */
const ownPending = new LuaScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', tonumber(ARGV[3]), ARGV[2])
local out = {}
for _, e in ipairs(p) do
  local r = redis.call('XRANGE', KEYS[1], e[1], e[1])
  if r[1] then table.insert(out, {e[1], r[1][2], e[4]}) end
end
return out`);

/** KEYS stream; ARGV group, consumer, entry ids... Renews the lease of the ids still ours; answers the others. */
const heartbeat = new LuaScript(`
local lost = {}
for i = 3, #ARGV do
  if owned(KEYS[1], ARGV[1], ARGV[i], ARGV[2]) then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  else
    table.insert(lost, ARGV[i])
  end
end
return lost`);

/** KEYS stream, delayed, dead; ARGV group. Answers {stream length, pending, delayed, dead}. */
const stats = new LuaScript(`
local pending = 0
local p = redis.pcall('XPENDING', KEYS[1], ARGV[1])
if type(p) == 'table' and p.err == nil then pending = p[1] end
return {redis.call('XLEN', KEYS[1]), pending, redis.call('ZCARD', KEYS[2]), redis.call('XLEN', KEYS[3])}`);

/** KEYS dead, stream; ARGV max length, (dead entry id, envelope or '')... Re-drives entries still dead. */
const redrive = new LuaScript(`
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('XDEL', KEYS[1], ARGV[i]) == 1 and ARGV[i + 1] ~= '' then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'job', ARGV[i + 1])
    n = n + 1
  end
end
return n`);

// ---- helpers -----------------------------------------------------------------------------------

function parseEnvelope(json: string | undefined): Envelope | undefined {
  if (json === undefined) return undefined;
  try {
    const v = JSON.parse(json) as Partial<Envelope>;
    if (typeof v.id !== 'string' || typeof v.type !== 'string' || typeof v.attempt !== 'number') return undefined;
    return {
      id: v.id,
      type: v.type,
      payload: v.payload ?? null,
      attempt: v.attempt,
      enqueuedAt: Number(v.enqueuedAt) || 0,
      lastError: v.lastError,
      ...(typeof v.tenant === 'string' ? { tenant: v.tenant } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Field list [k, v, k, v...] → value of `name`. */
function field(fields: unknown, name: string): string | undefined {
  if (!Array.isArray(fields)) return undefined;
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return String(fields[i + 1]);
  return undefined;
}

type StreamEntry = [id: string, fields: string[]];

function isReplyError(e: unknown): boolean {
  return e instanceof Error && e.name === 'ReplyError';
}

const isNoGroup = (e: unknown): boolean => String((e as Error)?.message).includes('NOGROUP');

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** redactUrl, also for `redis://:password@host` (no user name), the usual Redis form. */
const safeUrl = (url: string): string => redactUrl(url).replace(/\/\/:[^@]*@/, '//:***@');

/** Reconnect quickly (a 10 s outage should cost seconds, not minutes), with a little jitter. */
const retryStrategy = (times: number): number => Math.min(times * 100, 2000) + Math.floor(Math.random() * 100);

export class RedisStreamsQueue implements JobQueue {
  readonly durable = true;
  readonly workerId: string;
  private readonly url: string;
  private readonly cmd: Redis;
  private reader: Redis | undefined;
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
  private readonly runningOf = new Map<string, number>();
  private readonly share: number;
  /** When this consumer last set a job aside for its workspace's share (reading pauses a moment after). */
  private deferredAt = 0;
  private slotWaiter: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private claimCursor = '0-0';
  /**
   * Set when a connection dropped: a read or claim whose reply was lost left entries pending in our
   * name that we never saw; the loop picks them up at once instead of after the visibility timeout.
   */
  private recoverOwnPending = false;
  private promoteTimer: ReturnType<typeof setTimeout> | undefined;
  private promoteDueAt = Infinity;
  private heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  private lastConsumerSweep = Date.now();
  private closing = false;
  /** Set when close() gave up waiting: running jobs are left pending, never acked. */
  private abandoned = false;
  private closed: Promise<void> | undefined;
  private down = false;
  /** Counts lost connections of `cmd`: a command that spanned one may have run before ioredis re-sent it. */
  private cmdGeneration = 0;
  private readonly counters = { processed: 0, failed: 0, deadLettered: 0, latencyCount: 0, latencySumMs: 0, latencyMaxMs: 0 };

  private constructor(url: string, options: QueueOptions) {
    this.url = url;
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
    this.cmd = this.connect({ connectionName: this.workerId });
    this.cmd.on('close', () => {
      this.cmdGeneration++;
      this.recoverOwnPending = true;
    });
  }

  /** Connects, creates the consumer group, and fails if Redis does not answer within `connectTimeoutMs`. */
  static async open(url: string, options: QueueOptions = {}): Promise<RedisStreamsQueue> {
    const q = new RedisStreamsQueue(url, options);
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    try {
      await withTimeout(q.ensureGroup(), timeoutMs, `Redis at ${safeUrl(url)} did not answer within ${timeoutMs} ms`);
    } catch (e) {
      q.cmd.disconnect();
      throw e;
    }
    return q;
  }

  private connect(extra: Partial<RedisOptions>): Redis {
    const conn = new Redis(this.url, { protocol: 2, retryStrategy, ...extra });
    // ioredis reconnects by itself; without an 'error' listener it would print every failed attempt.
    conn.on('error', (e: Error) => this.connectionTrouble(e));
    conn.on('ready', () => {
      // Restored once every connection of this queue is back.
      if (!this.down || this.cmd?.status !== 'ready' || (this.reader && this.reader.status !== 'ready')) return;
      this.down = false;
      log.info('redis connection restored', { worker: this.workerId, redis: safeUrl(this.url) });
    });
    return conn;
  }

  /** One log line per outage, not one per reconnection attempt. */
  private connectionTrouble(e: unknown): void {
    if (isReplyError(e)) {
      log.error('redis command failed', { worker: this.workerId, error: (e as Error).message });
      return;
    }
    if (this.down || this.closing) return;
    this.down = true;
    log.warn('redis unavailable; jobs wait until it is back', {
      worker: this.workerId,
      redis: safeUrl(this.url),
      error: (e as Error)?.message,
    });
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.cmd.call('XGROUP', ['CREATE', this.keys.stream, GROUP, '0', 'MKSTREAM']);
    } catch (e) {
      if (!String((e as Error).message).includes('BUSYGROUP')) throw e;
    }
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
    this.reader = this.connect({ connectionName: `${this.workerId}:read`, maxRetriesPerRequest: null });
    this.reader.on('close', () => {
      this.recoverOwnPending = true;
    });
    log.info('job consumer started', {
      worker: this.workerId,
      queue: 'redis-streams',
      redis: safeUrl(this.url),
      stream: this.keys.stream,
      concurrency: this.concurrency,
      visibility_timeout_ms: this.visibilityMs,
    });
    this.heartbeatTimer = setInterval(() => void this.renewLeases(), Math.max(20, Math.floor(this.visibilityMs / 3)));
    this.schedulePromote(0);
    this.loopDone = this.readLoop();
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

  private async readLoop(): Promise<void> {
    const reclaimEveryMs = Math.min(Math.floor(this.visibilityMs / 2), 5000);
    let nextReclaimAt = 0;
    let errorDelay = 100;
    while (!this.closing) {
      if (this.free <= 0) {
        await this.waitForSlot();
        continue;
      }
      // Only the slot kept for other workspaces is free and the last job read was set aside: wait a
      // moment (or for a slot) instead of reading and setting aside the same workspace's flood again.
      const pause = this.deferredAt + DEFER_PAUSE_MS - Date.now();
      if (pause > 0 && this.free === 1 && this.concurrency > 1) {
        await Promise.race([this.waitForSlot(), sleep(pause)]);
        this.deferredAt = 0;
        continue;
      }
      try {
        if (this.recoverOwnPending && (await this.recoverOwn()) > 0) continue;
        if (Date.now() >= nextReclaimAt) {
          nextReclaimAt = Date.now() + reclaimEveryMs;
          if ((await this.reclaim()) > 0) continue;
          if (this.closing) break;
        }
        const block = Math.max(1, Math.min(this.blockMs, nextReclaimAt - Date.now()));
        const reply = (await (this.reader as Redis).call('XREADGROUP', [
          'GROUP',
          GROUP,
          this.workerId,
          'COUNT',
          this.free,
          'BLOCK',
          block,
          'STREAMS',
          this.keys.stream,
          '>',
        ])) as [string, StreamEntry[]][] | null;
        for (const [, entries] of reply ?? []) for (const [id, fields] of entries) this.start(id, fields, 1);
        errorDelay = 100;
      } catch (e) {
        if (this.closing) break;
        if (isNoGroup(e)) {
          // The group is gone (Redis restarted without persistence, or the key was deleted).
          log.warn('consumer group missing, recreating it', { worker: this.workerId, stream: this.keys.stream });
          await this.ensureGroup().catch((err) => this.connectionTrouble(err));
        } else {
          this.connectionTrouble(e);
        }
        await sleep(errorDelay);
        errorDelay = Math.min(errorDelay * 2, 2000);
      }
    }
  }

  /** Takes over entries idle longer than the visibility timeout (their consumer died or stalled). */
  private async reclaim(): Promise<number> {
    await this.sweepConsumers();
    const [cursor, entries] = (await claim.run(
      this.cmd,
      [this.keys.stream],
      [GROUP, this.workerId, this.visibilityMs, this.claimCursor, this.free],
    )) as [string, [string, string[], number][]];
    this.claimCursor = cursor;
    let started = 0;
    for (const [id, fields, deliveries] of entries) {
      if (this.running.has(id)) continue; // our own entry, whose lease lapsed while we were busy
      log.info('job taken over from a stalled worker', {
        worker: this.workerId,
        entry: id,
        job_id: parseEnvelope(field(fields, 'job'))?.id,
        deliveries,
      });
      this.start(id, fields, Number(deliveries));
      started++;
    }
    return started;
  }

  /** Starts entries pending in our name that are not running here (their delivery reply was lost). */
  private async recoverOwn(): Promise<number> {
    const entries = (await ownPending.run(this.cmd, [this.keys.stream], [GROUP, this.workerId, this.running.size + 100])) as [
      string,
      string[],
      number,
    ][];
    let started = 0;
    let missed = 0;
    for (const [id, fields, deliveries] of entries) {
      if (this.running.has(id)) continue;
      if (this.free <= 0) {
        missed++;
        continue;
      }
      log.info('job recovered after a lost reply', {
        worker: this.workerId,
        entry: id,
        job_id: parseEnvelope(field(fields, 'job'))?.id,
        deliveries,
      });
      this.start(id, fields, Number(deliveries));
      started++;
    }
    // Done once a pass finds nothing left over (more than a page is left to the visibility timeout).
    if (missed === 0) this.recoverOwnPending = false;
    return started;
  }

  /** Forgets consumers of dead processes (nothing pending, idle > 10 min) so XINFO stays readable. */
  private async sweepConsumers(): Promise<void> {
    if (Date.now() - this.lastConsumerSweep < 60_000) return;
    this.lastConsumerSweep = Date.now();
    const rows = (await this.cmd.call('XINFO', ['CONSUMERS', this.keys.stream, GROUP])) as unknown[][];
    for (const row of rows) {
      const name = field(row, 'name');
      if (name && name !== this.workerId && Number(field(row, 'pending')) === 0 && Number(field(row, 'idle')) > 600_000) {
        await this.cmd.call('XGROUP', ['DELCONSUMER', this.keys.stream, GROUP, name]);
      }
    }
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
    if (!mayStart(this.runningOf.get(tenant) ?? 0, this.running.size, this.concurrency, this.share, tenant)) {
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
    this.deferredAt = Date.now();
    try {
      const result = await settleRetry.run(
        this.cmd,
        [this.keys.stream, this.keys.delayed],
        [GROUP, this.workerId, entryId, DEFER_MS, JSON.stringify(env)],
      );
      if (result === 1) this.schedulePromote(DEFER_MS);
    } catch (e) {
      // Still pending in our name: recovered as our own, or taken over after the visibility timeout.
      this.recoverOwnPending = true;
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
    const tenant = env.tenant ?? NO_TENANT;
    this.runningOf.set(tenant, (this.runningOf.get(tenant) ?? 0) + 1);
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
      const result = await this.settle(run, outcome);
      if (result === 'abandoned') return; // shutdown: stays pending
      if (result === 'lost') {
        log.warn('job lease lost to another worker; not acknowledging it', this.fields(run));
        return;
      }
      this.count(run, outcome);
    } finally {
      if (this.running.delete(run.entryId)) {
        const tenant = run.env.tenant ?? NO_TENANT;
        const n = (this.runningOf.get(tenant) ?? 1) - 1;
        if (n > 0) this.runningOf.set(tenant, n);
        else this.runningOf.delete(tenant);
      }
      this.wake();
    }
  }

  /**
   * 'settled', or 'lost' when another consumer owns the entry, or 'abandoned' at shutdown. An entry
   * no longer pending counts as settled when the connection dropped meanwhile (the script ran but its
   * answer was lost, and it was sent again); otherwise it means another consumer took it over and
   * finished it.
   */
  private async settle(run: Running, outcome: AttemptOutcome): Promise<'settled' | 'lost' | 'abandoned'> {
    const { stream, delayed, dead } = this.keys;
    const base = [GROUP, this.workerId, run.entryId];
    let delay = 100;
    let retried = false;
    for (;;) {
      if (run.lost || this.abandoned) return 'abandoned';
      const generation = this.cmdGeneration;
      try {
        let result: unknown;
        if (outcome.kind === 'done') {
          result = await settleDone.run(this.cmd, [stream], base);
        } else if (outcome.kind === 'retry') {
          const next: Envelope = { ...run.env, attempt: run.job.attempt + 1, lastError: outcome.error };
          result = await settleRetry.run(this.cmd, [stream, delayed], [...base, outcome.delayMs, JSON.stringify(next)]);
          if (result === 1) this.schedulePromote(outcome.delayMs);
        } else {
          result = await settleDead.run(
            this.cmd,
            [stream, dead],
            [...base, this.deadMaxLength, ...this.deadFields(run, outcome.reason, outcome.error)],
          );
        }
        if (result === 1 || (result === 0 && (retried || this.cmdGeneration !== generation))) return 'settled';
        return 'lost';
      } catch (e) {
        if (isNoGroup(e)) return 'lost';
        retried = true;
        this.connectionTrouble(e);
        await sleep(delay);
        delay = Math.min(delay * 2, 2000);
      }
    }
  }

  private deadFields(run: Running, reason: DeadReason, error: string): string[] {
    const { job, env } = run;
    const stored: Envelope = { ...env, attempt: job.attempt, lastError: error };
    return [
      'id',
      job.id,
      'type',
      job.type,
      'reason',
      reason,
      'error',
      error,
      'attempts',
      String(job.attempt),
      'failed_at',
      String(Date.now()),
      'worker',
      this.workerId,
      'job',
      JSON.stringify(stored),
    ];
  }

  private count(run: Running, outcome: AttemptOutcome): void {
    const c = this.counters;
    if (outcome.kind === 'done') {
      const ms = Date.now() - run.env.enqueuedAt;
      c.processed++;
      c.latencyCount++;
      c.latencySumMs += ms;
      c.latencyMaxMs = Math.max(c.latencyMaxMs, ms);
      log.debug('job completed', { ...this.fields(run), latency_ms: ms });
    } else if (outcome.kind === 'retry') {
      c.failed++;
      log.warn('job failed, will retry', { ...this.fields(run), delay_ms: outcome.delayMs, error: outcome.error });
    } else {
      c.failed++;
      c.deadLettered++;
      log.error('job dead-lettered', { ...this.fields(run), reason: outcome.reason, error: outcome.error });
    }
  }

  /** Renews the lease of running jobs; a job found owned by another consumer is aborted here. */
  private async renewLeases(): Promise<void> {
    const ids = [...this.running.keys()];
    if (ids.length === 0) return;
    try {
      const lost = (await heartbeat.run(this.cmd, [this.keys.stream], [GROUP, this.workerId, ...ids])) as string[];
      for (const id of lost) {
        const run = this.running.get(id);
        if (!run || run.lost || run.settling) continue; // settled meanwhile
        run.lost = true;
        run.controller.abort(new Error('job lease lost: another worker took it over'));
        log.warn('job lease lost (this worker stalled past the visibility timeout)', this.fields(run));
      }
    } catch (e) {
      this.connectionTrouble(e);
    }
  }

  /** Moves due retries back into the stream, now or when the next one is due (at most every pollIntervalMs). */
  private schedulePromote(inMs: number): void {
    if (this.closing || !this.reader) return;
    const due = Date.now() + Math.min(inMs, this.pollMs);
    if (this.promoteTimer && due >= this.promoteDueAt) return;
    clearTimeout(this.promoteTimer);
    this.promoteDueAt = due;
    this.promoteTimer = setTimeout(() => void this.promoteDue(), Math.max(0, due - Date.now()));
  }

  private async promoteDue(): Promise<void> {
    this.promoteTimer = undefined;
    this.promoteDueAt = Infinity;
    let next = this.pollMs;
    try {
      const batch = 100;
      const [moved, wait] = (await promote.run(this.cmd, [this.keys.delayed, this.keys.stream], [this.maxLength, batch])) as [
        number,
        number,
      ];
      if (moved === batch) next = 0;
      else if (wait >= 0) next = wait;
    } catch (e) {
      this.connectionTrouble(e);
    }
    this.schedulePromote(next);
  }

  // ---- shutdown, stats, dead letter ------------------------------------------------------------

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    this.closing = true;
    clearTimeout(this.promoteTimer);
    this.wake();
    const deadline = Date.now() + this.graceMs;
    if (this.reader && this.loopDone) {
      await this.unblockReader();
      await Promise.race([this.loopDone, sleep(Math.max(0, deadline - Date.now()))]);
    }
    this.reader?.disconnect();
    while (this.running.size > 0 && Date.now() < deadline) await sleep(Math.min(20, Math.max(1, deadline - Date.now())));
    if (this.running.size > 0) {
      this.abandoned = true;
      for (const run of this.running.values()) {
        log.warn('job still running at shutdown; left pending for another worker', this.fields(run));
        run.controller.abort(new Error('queue closed'));
      }
    } else if (this.reader) {
      await this.forgetConsumer();
    }
    clearInterval(this.heartbeatTimer);
    await Promise.race([this.cmd.quit().catch(() => undefined), sleep(1000)]);
    this.cmd.disconnect();
  }

  /** Ends our blocking XREADGROUP at once (CLIENT UNBLOCK answers it as a timeout, so nothing is lost). */
  private async unblockReader(): Promise<void> {
    try {
      const list = String(await Promise.race([this.cmd.call('CLIENT', ['LIST', 'TYPE', 'normal']), sleep(500).then(() => '')]));
      const line = list.split('\n').find((l) => l.includes(` name=${this.workerId}:read `));
      const id = line?.match(/^id=(\d+)/)?.[1];
      if (id) await this.cmd.call('CLIENT', ['UNBLOCK', id]);
    } catch {
      // CLIENT may be forbidden by ACLs: the read then ends at its BLOCK timeout or on disconnect.
    }
  }

  /** A cleanly stopped consumer with nothing pending removes its name from the group. */
  private async forgetConsumer(): Promise<void> {
    try {
      const mine = (await this.cmd.call('XPENDING', [this.keys.stream, GROUP, '-', '+', 1, this.workerId])) as unknown[];
      if (mine.length === 0) await this.cmd.call('XGROUP', ['DELCONSUMER', this.keys.stream, GROUP, this.workerId]);
    } catch {
      // harmless: the sweep of another consumer removes it later
    }
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
    const c = this.counters;
    return {
      workerId: this.workerId,
      waiting: Math.max(0, (length ?? 0) - (pending ?? 0)),
      delayed: delayed ?? 0,
      pending: pending ?? 0,
      dead: dead ?? 0,
      running: this.running.size,
      processed: c.processed,
      failed: c.failed,
      deadLettered: c.deadLettered,
      latency: { count: c.latencyCount, sumMs: c.latencySumMs, maxMs: c.latencyMaxMs },
    };
  }

  async listDead(limit = 100): Promise<DeadJob[]> {
    if (limit <= 0) return [];
    const entries = (await this.cmd.call('XREVRANGE', [this.keys.dead, '+', '-', 'COUNT', limit])) as StreamEntry[];
    return entries.map(([, fields]) => toDeadJob(fields));
  }

  async retryDead(id: string | 'all'): Promise<number> {
    let total = 0;
    let start = '-';
    const seen = new Set<string>();
    for (;;) {
      const entries = (await this.cmd.call('XRANGE', [this.keys.dead, start, '+', 'COUNT', 200])) as StreamEntry[];
      if (entries.length === 0) return total;
      const args: string[] = [];
      for (const [entryId, fields] of entries) {
        const jobId = field(fields, 'id') ?? '';
        if (id !== 'all' && jobId !== id) continue;
        // A job dead-lettered twice (a crash between two steps elsewhere) is re-driven once.
        const env = parseEnvelope(field(fields, 'job'));
        const fresh = env && !seen.has(jobId) ? JSON.stringify({ ...env, attempt: 1, enqueuedAt: Date.now(), lastError: undefined }) : '';
        seen.add(jobId);
        args.push(entryId, fresh);
      }
      if (args.length > 0) total += Number(await redrive.run(this.cmd, [this.keys.dead, this.keys.stream], [this.maxLength, ...args]));
      start = `(${(entries.at(-1) as StreamEntry)[0]}`;
    }
  }
}

function toDeadJob(fields: string[]): DeadJob {
  const env = parseEnvelope(field(fields, 'job'));
  return {
    id: field(fields, 'id') ?? env?.id ?? '',
    type: field(fields, 'type') ?? env?.type ?? '',
    payload: env?.payload ?? null,
    attempts: Number(field(fields, 'attempts') ?? 0),
    reason: (field(fields, 'reason') ?? 'permanent_error') as DeadReason,
    error: field(fields, 'error') ?? '',
    enqueuedAt: env?.enqueuedAt ?? 0,
    failedAt: Number(field(fields, 'failed_at') ?? 0),
    worker: field(fields, 'worker') ?? '',
    ...(env?.tenant ? { tenant: env.tenant } : {}),
  };
}
