import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { openQueue } from '../adapters/queue/open-queue.ts';
import { loadConfig } from '../core/config.ts';
import { type Job, JobError, type JobQueue, permanentError, type QueueOptions, retryableError } from '../core/ports/queue.ts';
import { JobTimeoutError, outcomeOfFailure, retryAfterDelay, retryPolicy } from '../core/jobs/retry-policy.ts';
import { captureLog } from './support/capture-log.ts';
import { freshPrefix, type RedisServer, startRedis } from './support/redis.ts';

/**
 * One contract, two implementations: every behaviour the kernel relies on holds for the in-process
 * queue and for Redis Streams alike (against a real redis-server).
 */
const IMPLEMENTATIONS = ['in-process', 'redis-streams'] as const;

const FAST: QueueOptions = {
  backoff: { baseMs: 20, maxMs: 200 },
  pollIntervalMs: 20,
  blockMs: 200,
  visibilityTimeoutMs: 5000,
  shutdownGraceMs: 2000,
  jobTimeoutMs: 5000,
};

let redis: RedisServer | undefined;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

/** A promise and its resolve, to hold a handler until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('a provider’s Retry-After in the retry policy', () => {
  const policy = retryPolicy({ backoff: { baseMs: 100, maxMs: 1000, jitter: 0 }, maxRetryDelayMs: 10_000 });
  const failing = (retryAfterMs?: number) => retryableError('429', retryAfterMs);

  test('the retry waits the Retry-After, spread up to a fifth more, when it is longer than the backoff', () => {
    expect(outcomeOfFailure(failing(2000), 1, policy, () => 0)).toMatchObject({ kind: 'retry', delayMs: 2000 });
    expect(outcomeOfFailure(failing(2000), 1, policy, () => 1)).toMatchObject({ kind: 'retry', delayMs: 2400 });
    expect(outcomeOfFailure(failing(2000), 1, policy, () => 0.5)).toMatchObject({ kind: 'retry', delayMs: 2200 });
  });

  test('a shorter Retry-After, or none, leaves the backoff', () => {
    expect(outcomeOfFailure(failing(50), 2, policy, () => 0)).toMatchObject({ kind: 'retry', delayMs: 200 });
    expect(outcomeOfFailure(failing(), 2, policy, () => 0)).toMatchObject({ kind: 'retry', delayMs: 200 });
  });

  test('a Retry-After is capped at maxRetryDelayMs (JOB_MAX_RETRY_DELAY_MS; 10 min by default)', () => {
    expect(outcomeOfFailure(failing(86_400_000), 1, policy, () => 1)).toMatchObject({ kind: 'retry', delayMs: 10_000 });
    expect(retryAfterDelay(failing(86_400_000), retryPolicy({}), () => 0)).toBe(600_000);
    expect(loadConfig({ JOB_MAX_RETRY_DELAY_MS: '30000' }).queue.maxRetryDelayMs).toBe(30_000);
  });

  test('a permanent failure, or the last attempt, is not retried whatever it asks', () => {
    expect(outcomeOfFailure(new JobError('400', { retryable: false, retryAfterMs: 2000 }), 1, policy).kind).toBe('dead');
    expect(outcomeOfFailure(failing(2000), policy.maxAttempts, policy).kind).toBe('dead');
  });
});

describe.each(IMPLEMENTATIONS)('job queue contract: %s', (impl) => {
  const opened: JobQueue[] = [];
  let prefix = '';
  const open = async (options: QueueOptions = {}, samePrefix = false): Promise<JobQueue> => {
    if (!samePrefix) prefix = freshPrefix(impl);
    const q = await openQueue(impl === 'redis-streams' ? redis?.url : undefined, { ...FAST, prefix, ...options });
    opened.push(q);
    return q;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((q) => q.close()));
  });

  test('every job is delivered, with id, type, payload and attempt', async () => {
    const q = await open();
    const seen: Job[] = [];
    q.consume({ work: async (job) => void seen.push(job) }, { concurrency: 4 });
    const ids: string[] = [];
    for (let n = 0; n < 50; n++) ids.push(await q.enqueue('work', { n }));
    await waitFor('50 jobs', () => seen.length >= 50);
    await q.drain({ timeoutMs: 5000 });
    expect(seen.map((j) => (j.payload as { n: number }).n).sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
    expect(new Set(seen.map((j) => j.id))).toEqual(new Set(ids));
    expect(seen.every((j) => j.type === 'work' && j.attempt === 1)).toBe(true);
    const s = await q.stats();
    expect(s).toMatchObject({ waiting: 0, pending: 0, delayed: 0, running: 0, processed: 50, failed: 0 });
  });

  test('a job handed over twice under its outbox id (a repeated relay) runs once, with that id', async () => {
    const q = await open();
    const seen: Job[] = [];
    q.consume({ work: async (job) => void seen.push(job) }, { concurrency: 2 });
    const id = '0190f5a4-0000-7000-8000-000000000001';
    const answers = await Promise.all([q.enqueue('work', { n: 1 }, { id }), q.enqueue('work', { n: 1 }, { id })]);
    expect(answers).toEqual([id, id]);
    await q.enqueue('work', { n: 1 }, { id }); // and once more, after the first was taken
    await q.enqueue('work', { n: 2 }); // a job without an outbox id is never refused
    await waitFor('2 jobs', () => seen.length >= 2);
    await q.drain({ timeoutMs: 5000 });
    await Bun.sleep(50);
    expect(seen).toHaveLength(2);
    expect(seen.filter((j) => j.id === id).map((j) => j.payload)).toEqual([{ n: 1 }]);
  });

  test('a retryable failure is retried with exponential backoff, then succeeds', async () => {
    const q = await open({ backoff: { baseMs: 60, jitter: 0 } });
    const attempts: { attempt: number; at: number }[] = [];
    q.consume(
      {
        flaky: async (job) => {
          attempts.push({ attempt: job.attempt, at: performance.now() });
          if (job.attempt < 3) throw retryableError('provider answered 503');
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('flaky', {});
    await waitFor('3 attempts', () => attempts.length >= 3);
    await q.drain({ timeoutMs: 5000 });
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    const [a1, a2, a3] = attempts.map((a) => a.at) as [number, number, number];
    expect(a2 - a1).toBeGreaterThanOrEqual(55); // 60 ms after the first failure
    expect(a3 - a2).toBeGreaterThanOrEqual(115); // 120 ms after the second
    expect(await q.listDead()).toEqual([]);
    expect(await q.stats()).toMatchObject({ processed: 1, failed: 2, deadLettered: 0, dead: 0 });
  });

  test('a retryable failure carrying retryAfterMs (a provider’s Retry-After) is retried no sooner, above the backoff', async () => {
    const q = await open({ backoff: { baseMs: 20, jitter: 0 } });
    const attempts: number[] = [];
    q.consume(
      {
        throttled: async (job) => {
          attempts.push(performance.now());
          if (job.attempt === 1) throw retryableError('provider answered 429', 700);
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('throttled', {});
    await waitFor('2 attempts', () => attempts.length >= 2);
    await q.drain({ timeoutMs: 5000 });
    const [a1, a2] = attempts as [number, number];
    expect(a2 - a1).toBeGreaterThanOrEqual(695); // the 20 ms backoff alone would retry at once
    expect(a2 - a1).toBeLessThan(700 * 1.2 + 1000); // its spread is at most a fifth (plus a slow machine)
  });

  test('a Retry-After longer than maxRetryDelayMs holds the retry back only that long', async () => {
    const q = await open({ backoff: { baseMs: 20, jitter: 0 }, maxRetryDelayMs: 300 });
    const attempts: number[] = [];
    q.consume(
      {
        throttled: async (job) => {
          attempts.push(performance.now());
          if (job.attempt === 1) throw retryableError('provider answered 429', 3_600_000);
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('throttled', {});
    await waitFor('2 attempts', () => attempts.length >= 2, 5000);
    const [a1, a2] = attempts as [number, number];
    expect(a2 - a1).toBeGreaterThanOrEqual(295);
  });

  test('an error without a retryable flag is retried too (as in BullMQ)', async () => {
    const q = await open();
    const attempts: number[] = [];
    q.consume(
      {
        boom: async (job) => {
          attempts.push(job.attempt);
          if (job.attempt === 1) throw new Error('ECONNRESET');
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('boom', {});
    await waitFor('2 attempts', () => attempts.length >= 2);
    await q.drain({ timeoutMs: 5000 });
    expect(attempts).toEqual([1, 2]);
  });

  test('a permanent failure goes to the dead letter at once, with payload, reason and error', async () => {
    const q = await open();
    let calls = 0;
    q.consume(
      {
        bad: async () => {
          calls++;
          throw permanentError('company domain "x" is not a domain');
        },
        provider4xx: async () => {
          calls++;
          throw Object.assign(new Error('Apollo answered 401'), { retryable: false, status: 401 });
        },
      },
      { concurrency: 2 },
    );
    const id = await q.enqueue('bad', { domain: 'x' });
    const id2 = await q.enqueue('provider4xx', { k: 1 });
    await waitFor('2 dead jobs', async () => (await q.stats()).dead === 2);
    await q.drain({ timeoutMs: 5000 });
    expect(calls).toBe(2);
    const dead = await q.listDead(10);
    const byId = new Map(dead.map((d) => [d.id, d]));
    expect(byId.get(id)).toMatchObject({
      type: 'bad',
      payload: { domain: 'x' },
      attempts: 1,
      reason: 'permanent_error',
      error: 'company domain "x" is not a domain',
    });
    expect(byId.get(id2)).toMatchObject({ type: 'provider4xx', attempts: 1, reason: 'permanent_error', error: 'Apollo answered 401' });
    expect(byId.get(id)?.failedAt).toBeGreaterThan(0);
    expect(byId.get(id)?.worker).toBe(q.workerId);
    expect(await q.stats()).toMatchObject({ failed: 2, deadLettered: 2, dead: 2, processed: 0 });
  });

  test('after maxAttempts a job goes to the dead letter with the last error', async () => {
    const q = await open({ maxAttempts: 3 });
    const attempts: number[] = [];
    q.consume(
      {
        down: async (job) => {
          attempts.push(job.attempt);
          throw retryableError(`timeout on attempt ${job.attempt}`);
        },
      },
      { concurrency: 1 },
    );
    const id = await q.enqueue('down', { x: 1 });
    await waitFor('dead job', async () => (await q.stats()).dead === 1);
    await q.drain({ timeoutMs: 5000 });
    expect(attempts).toEqual([1, 2, 3]);
    const [dead] = await q.listDead();
    expect(dead).toMatchObject({ id, type: 'down', payload: { x: 1 }, attempts: 3, reason: 'max_attempts', error: 'timeout on attempt 3' });
  });

  test('a job type with no handler, and a payload failing its schema, are dead-lettered without a retry', async () => {
    const q = await open();
    let calls = 0;
    q.consume(
      {
        typed: {
          payloadSchema: Type.Object({ project_pk: Type.Integer({ minimum: 1 }) }),
          handler: async () => void calls++,
        },
      },
      { concurrency: 2 },
    );
    const unknown = await q.enqueue('nobody-handles-this', { a: 1 });
    const invalid = await q.enqueue('typed', { project_pk: 'seven' });
    const valid = await q.enqueue('typed', { project_pk: 7 });
    await waitFor('2 dead jobs', async () => (await q.stats()).dead === 2);
    await q.drain({ timeoutMs: 5000 });
    expect(calls).toBe(1);
    const dead = new Map((await q.listDead()).map((d) => [d.id, d]));
    expect(dead.get(unknown)).toMatchObject({ reason: 'no_handler', attempts: 1 });
    expect(dead.get(unknown)?.error).toContain('nobody-handles-this');
    expect(dead.get(invalid)).toMatchObject({ reason: 'invalid_payload', attempts: 1 });
    expect(dead.get(invalid)?.error).toContain('/project_pk');
    expect(dead.has(valid)).toBe(false);
  });

  test('retryDead re-drives one job, or all of them, with a fresh attempt count', async () => {
    const q = await open({ maxAttempts: 1 });
    let healthy = false;
    const done: Job[] = [];
    q.consume(
      {
        job: async (job) => {
          if (!healthy) throw retryableError('provider down');
          done.push(job);
        },
      },
      { concurrency: 2 },
    );
    const a = await q.enqueue('job', { n: 'a' });
    const b = await q.enqueue('job', { n: 'b' });
    const c = await q.enqueue('job', { n: 'c' });
    await waitFor('3 dead jobs', async () => (await q.stats()).dead === 3);
    expect((await q.listDead(2)).length).toBe(2);
    healthy = true;
    expect(await q.retryDead(a)).toBe(1);
    expect(await q.retryDead(a)).toBe(0); // already re-driven
    await waitFor('job a done', () => done.length === 1);
    expect(done[0]).toMatchObject({ id: a, payload: { n: 'a' }, attempt: 1 });
    expect(await q.retryDead('all')).toBe(2);
    await waitFor('all done', () => done.length === 3);
    await q.drain({ timeoutMs: 5000 });
    expect(new Set(done.map((j) => j.id))).toEqual(new Set([a, b, c]));
    expect(await q.listDead()).toEqual([]);
    expect((await q.stats()).dead).toBe(0);
  });

  test('an attempt past jobTimeoutMs is aborted and retried', async () => {
    const q = await open({ jobTimeoutMs: 100 });
    const reasons: unknown[] = [];
    const attempts: number[] = [];
    q.consume(
      {
        slow: async (job, { signal }) => {
          attempts.push(job.attempt);
          if (job.attempt > 1) return;
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          reasons.push(signal.reason);
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('slow', {});
    await waitFor('2 attempts', () => attempts.length >= 2);
    await q.drain({ timeoutMs: 5000 });
    expect(attempts).toEqual([1, 2]);
    expect(reasons[0]).toBeInstanceOf(JobTimeoutError);
    expect(await q.stats()).toMatchObject({ processed: 1, failed: 1 });
  });

  test('never more than `concurrency` jobs run at once', async () => {
    const q = await open();
    let now = 0;
    let max = 0;
    let done = 0;
    q.consume(
      {
        work: async () => {
          now++;
          max = Math.max(max, now);
          await Bun.sleep(15);
          now--;
          done++;
        },
      },
      { concurrency: 3 },
    );
    for (let n = 0; n < 24; n++) await q.enqueue('work', { n });
    await waitFor('24 jobs', () => done === 24);
    expect(max).toBe(3);
  });

  test('close() waits for running jobs, acknowledges them, and takes no new ones', async () => {
    const q = await open({ shutdownGraceMs: 3000 });
    const started: number[] = [];
    let finished = 0;
    q.consume(
      {
        work: async (job) => {
          started.push((job.payload as { n: number }).n);
          await Bun.sleep(200);
          finished++;
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('work', { n: 1 });
    await waitFor('first job running', () => started.length === 1);
    await q.enqueue('work', { n: 2 });
    await q.close();
    expect(finished).toBe(1);
    expect(started).toEqual([1]);
    expect(q.enqueue('work', { n: 3 })).rejects.toThrow('closed');
    if (impl === 'redis-streams') {
      // The finished job was acked; the other one still waits, durable, for the next worker.
      const other = await open({}, true);
      expect(await other.stats()).toMatchObject({ waiting: 1, pending: 0 });
    }
  });

  test('close() past its grace period aborts a running job and never acknowledges it', async () => {
    const q = await open({ shutdownGraceMs: 100, visibilityTimeoutMs: 500 });
    const reasons: unknown[] = [];
    q.consume(
      {
        stuck: async (_job, { signal }) => {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          reasons.push(signal.reason);
        },
      },
      { concurrency: 1 },
    );
    const id = await q.enqueue('stuck', {});
    await waitFor('job running', async () => (await q.stats()).running === 1);
    const t0 = Date.now();
    await q.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    await waitFor('abort', () => reasons.length === 1);
    expect(String(reasons[0])).toContain('closed');
    if (impl === 'redis-streams') {
      // Left pending: another worker takes it over after the visibility timeout.
      const next = await open({ visibilityTimeoutMs: 500 }, true);
      expect(await next.stats()).toMatchObject({ pending: 1, processed: 0 });
      const done: Job[] = [];
      next.consume({ stuck: async (job) => void done.push(job) }, { concurrency: 1 });
      await waitFor('take-over', () => done.length === 1, 3000);
      expect(done[0]).toMatchObject({ id, attempt: 2 });
    }
  });

  test('stats report queue depth, pending, counters and latency', async () => {
    const q = await open();
    const hold = gate();
    let ran = 0;
    q.consume(
      {
        work: async (job) => {
          if ((job.payload as { first?: boolean }).first) await hold.promise;
          await Bun.sleep(5);
          ran++;
        },
        fail: async () => {
          throw permanentError('nope');
        },
      },
      { concurrency: 1 },
    );
    await q.enqueue('work', { first: true });
    await waitFor('first job running', async () => (await q.stats()).running === 1);
    for (let n = 0; n < 3; n++) await q.enqueue('work', { n });
    await q.enqueue('fail', {});
    expect(await q.stats()).toMatchObject({ waiting: 4, pending: 1, running: 1, processed: 0, dead: 0 });
    hold.open();
    await waitFor('all settled', () => ran === 4);
    await q.drain({ timeoutMs: 5000 });
    const s = await q.stats();
    expect(s).toMatchObject({
      workerId: q.workerId,
      waiting: 0,
      pending: 0,
      running: 0,
      delayed: 0,
      processed: 4,
      failed: 1,
      deadLettered: 1,
      dead: 1,
    });
    expect(s.latency.count).toBe(4);
    expect(s.latency.maxMs).toBeGreaterThanOrEqual(4);
    expect(s.latency.sumMs).toBeGreaterThanOrEqual(s.latency.maxMs);
  });

  test('job log lines are JSON naming the worker and the job', async () => {
    const { lines: records } = await captureLog(async () => {
      const q = await open({ maxAttempts: 2 });
      q.consume({ work: async () => Promise.reject(retryableError('503')) }, { concurrency: 1 });
      await q.enqueue('work', {});
      await waitFor('dead job', async () => (await q.stats()).dead === 1);
    }, 'debug');
    const jobLines = records.filter((r) => String(r.msg).startsWith('job ') && r.msg !== 'job consumer started');
    expect(jobLines.map((r) => r.msg)).toEqual(expect.arrayContaining(['job started', 'job failed, will retry', 'job dead-lettered']));
    for (const r of jobLines) {
      expect(typeof r.worker).toBe('string');
      expect(typeof r.job_id).toBe('string');
    }
  });
});
