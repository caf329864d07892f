import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { type Subprocess, spawn } from 'bun';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { InProcessQueue } from '../adapters/queue/in-process.ts';
import { openQueue } from '../adapters/queue/open-queue.ts';
import type { Job, JobQueue, QueueOptions } from '../core/ports/queue.ts';
import { captureLog } from './support/capture-log.ts';
import { freshPrefix, type RedisServer, startRedis } from './support/redis.ts';

/**
 * What only the Redis queue promises: jobs survive the death of a worker process, several
 * processes share one stream without doing a job twice, delayed retries are durable, and a Redis
 * restart mid-run costs time, not jobs. Workers are real `bun` child processes, killed with SIGKILL.
 */

const ROOT = join(import.meta.dir, '..');
const VISIBILITY_MS = 500;
const FAST: QueueOptions = {
  pollIntervalMs: 20,
  blockMs: 200,
  visibilityTimeoutMs: VISIBILITY_MS,
  shutdownGraceMs: 2000,
  backoff: { baseMs: 20 },
};

/** A worker process: `work` jobs say `taken`/`done` on stdout; CHILD_MODE=hang never finishes, fail-once fails attempt 1. */
const CHILD = `
import { openQueue } from ${JSON.stringify(join(ROOT, 'adapters/queue/open-queue.ts'))};
const env = process.env;
const say = (o) => process.stdout.write('EVT ' + JSON.stringify(o) + '\\n');
const q = await openQueue(env.CHILD_REDIS_URL, {
  prefix: env.CHILD_PREFIX, visibilityTimeoutMs: ${VISIBILITY_MS}, pollIntervalMs: 20, blockMs: 200,
  backoff: { baseMs: Number(env.CHILD_BACKOFF_MS ?? 20), jitter: 0 },
});
q.consume({
  work: async (job) => {
    say({ event: 'taken', id: job.id, attempt: job.attempt, worker: q.workerId });
    if (env.CHILD_MODE === 'hang') await new Promise(() => {});
    if (env.CHILD_MODE === 'fail-once' && job.attempt === 1) throw Object.assign(new Error('provider 503'), { retryable: true });
    await Bun.sleep(Number(job.payload.ms ?? 5));
    say({ event: 'done', id: job.id, attempt: job.attempt, worker: q.workerId });
  },
}, { concurrency: Number(env.CHILD_CONCURRENCY ?? 1) });
process.on('SIGTERM', async () => { await q.close(); process.exit(0); });
say({ event: 'ready', worker: q.workerId });
`;

interface ChildEvent {
  event: 'ready' | 'taken' | 'done';
  id?: string;
  attempt?: number;
  worker: string;
}

class Child {
  readonly events: ChildEvent[] = [];
  readonly proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  constructor(env: Record<string, string>) {
    this.proc = spawn(['bun', '-e', CHILD], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    void this.read();
  }
  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of this.proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('EVT ')) this.events.push(JSON.parse(line.slice(4)) as ChildEvent);
        nl = buffer.indexOf('\n');
      }
    }
  }
  count(event: ChildEvent['event']): number {
    return this.events.filter((e) => e.event === event).length;
  }
  async waitFor(event: ChildEvent['event'], n = 1, timeoutMs = 10_000): Promise<void> {
    await waitFor(
      `${n} "${event}" from a child`,
      () => this.count(event) >= n,
      timeoutMs,
      async () => {
        if (this.proc.exitCode !== null)
          throw new Error(`child exited ${this.proc.exitCode}: ${await new Response(this.proc.stderr).text()}`);
      },
    );
  }
  async kill(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.proc.exited;
  }
  async stop(): Promise<number> {
    this.proc.kill('SIGTERM');
    return this.proc.exited;
  }
}

async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  check?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    await check?.();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

let redis: RedisServer;
const opened: JobQueue[] = [];
const children: Child[] = [];

async function open(prefix: string, options: QueueOptions = {}, url = redis.url): Promise<JobQueue> {
  const q = await openQueue(url, { ...FAST, prefix, ...options });
  opened.push(q);
  return q;
}

function child(prefix: string, env: Record<string, string> = {}): Child {
  const c = new Child({ CHILD_REDIS_URL: redis.url, CHILD_PREFIX: prefix, ...env });
  children.push(c);
  return c;
}

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) await c.kill();
  await Promise.all(opened.splice(0).map((q) => q.close()));
});
afterAll(async () => {
  await redis.stop();
});

describe('openQueue', () => {
  test('no Redis URL gives the in-process queue', async () => {
    const q = await openQueue(undefined);
    expect(q).toBeInstanceOf(InProcessQueue);
    await q.close();
  });

  test('an unreachable Redis fails fast, without showing the password', async () => {
    const port = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const url = `redis://app:hunter2@127.0.0.1:${port.port}`;
    port.stop(true);
    const error = await openQueue(url, { connectTimeoutMs: 300 }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain('did not answer');
    expect(error?.message).toContain('app:***@');
    expect(error?.message).not.toContain('hunter2');
  });
});

describe('Redis Streams queue across processes', () => {
  test('a job held by a worker killed mid-job is taken over after the visibility timeout and done exactly once', async () => {
    const prefix = freshPrefix('crash');
    const doomed = child(prefix, { CHILD_MODE: 'hang' });
    await doomed.waitFor('ready');
    const producer = await open(prefix);
    const id = await producer.enqueue('work', { ms: 5 });
    await doomed.waitFor('taken');
    await doomed.kill();
    const killedAt = Date.now();
    expect(await producer.stats()).toMatchObject({ pending: 1, waiting: 0 });

    const done: Job[] = [];
    const rescuer = await open(prefix);
    rescuer.consume({ work: async (job) => void done.push(job) }, { concurrency: 2 });
    await waitFor('the job to be taken over', () => done.length === 1, 5000);
    expect(Date.now() - killedAt).toBeLessThan(VISIBILITY_MS * 10); // taken over after the visibility timeout, not never
    expect(done[0]).toMatchObject({ id, attempt: 2 });
    await Bun.sleep(VISIBILITY_MS + 200);
    expect(done.length).toBe(1);
    expect(await producer.stats()).toMatchObject({ pending: 0, waiting: 0, dead: 0 });
  });

  test('a job that kills its worker every time is dead-lettered once its deliveries reach maxAttempts', async () => {
    const prefix = freshPrefix('crashloop');
    const producer = await open(prefix);
    const id = await producer.enqueue('work', { poison: true });
    for (let n = 1; n <= 2; n++) {
      const victim = child(prefix, { CHILD_MODE: 'hang' });
      await victim.waitFor('taken', 1, 5000);
      expect(victim.events.find((e) => e.event === 'taken')?.attempt).toBe(n);
      await victim.kill();
    }
    const ran: Job[] = [];
    const last = await open(prefix, { maxAttempts: 2 });
    last.consume({ work: async (job) => void ran.push(job) }, { concurrency: 1 });
    await waitFor('dead letter', async () => (await producer.stats()).dead === 1, 5000);
    expect(ran).toEqual([]);
    const [dead] = await producer.listDead();
    expect(dead).toMatchObject({ id, reason: 'max_attempts', attempts: 2, payload: { poison: true } });
    expect(dead?.error).toContain('stopped or stalled');
    expect(await producer.stats()).toMatchObject({ pending: 0, waiting: 0 });
  });

  test('entries delivered in our name whose reply was lost are picked up at once after a reconnect', async () => {
    const prefix = freshPrefix('lostreply');
    const q = await open(prefix, { visibilityTimeoutMs: 10_000 });
    const done: Job[] = [];
    q.consume({ work: async (job) => void done.push(job) }, { concurrency: 2 });
    await Bun.sleep(100);
    const admin = new Redis(redis.url);
    try {
      // XADD and a read in q's name in one transaction: q's own blocked read never sees the entry,
      // as if the reply of its read had been lost on the way.
      const env = { id: 'lost-reply-job', type: 'work', payload: { n: 1 }, attempt: 1, enqueuedAt: Date.now() };
      await admin
        .multi()
        .call('XADD', `${prefix}:stream`, '*', 'job', JSON.stringify(env))
        .call('XREADGROUP', 'GROUP', 'workers', q.workerId, 'COUNT', '1', 'STREAMS', `${prefix}:stream`, '>')
        .exec();
      await Bun.sleep(300);
      expect(done).toEqual([]);
      expect(await q.stats()).toMatchObject({ pending: 1, running: 0 });
      const list = String(await admin.call('CLIENT', ['LIST', 'TYPE', 'normal']));
      const reader = list
        .split('\n')
        .find((l) => l.includes(` name=${q.workerId}:read `))
        ?.match(/^id=(\d+)/)?.[1];
      await admin.call('CLIENT', ['KILL', 'ID', reader as string]);
    } finally {
      admin.disconnect();
    }
    await waitFor('the recovered job', () => done.length === 1, 3000);
    expect(done[0]).toMatchObject({ id: 'lost-reply-job', attempt: 1 });
  });

  test('two worker processes on one stream share the jobs and do none twice', async () => {
    const prefix = freshPrefix('share');
    const a = child(prefix, { CHILD_CONCURRENCY: '2' });
    const b = child(prefix, { CHILD_CONCURRENCY: '2' });
    await Promise.all([a.waitFor('ready'), b.waitFor('ready')]);
    const producer = await open(prefix);
    const ids = new Set<string>();
    for (let n = 0; n < 60; n++) ids.add(await producer.enqueue('work', { ms: 10 }));
    await waitFor('60 jobs done', () => a.count('done') + b.count('done') >= 60, 10_000);
    await Bun.sleep(200);
    const taken = [...a.events, ...b.events].filter((e) => e.event === 'taken').map((e) => e.id);
    const done = [...a.events, ...b.events].filter((e) => e.event === 'done').map((e) => e.id);
    expect(taken.length).toBe(60);
    expect(new Set(taken)).toEqual(ids);
    expect(done.length).toBe(60);
    expect(a.count('done')).toBeGreaterThan(0);
    expect(b.count('done')).toBeGreaterThan(0);
    expect(a.events[0]?.worker).not.toBe(b.events[0]?.worker);
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
    expect(await producer.stats()).toMatchObject({ waiting: 0, pending: 0, delayed: 0 });
  });

  test('a delayed retry survives the death of its worker and runs on another', async () => {
    const prefix = freshPrefix('delayed');
    const first = child(prefix, { CHILD_MODE: 'fail-once', CHILD_BACKOFF_MS: '400' });
    await first.waitFor('ready');
    const producer = await open(prefix);
    const id = await producer.enqueue('work', { ms: 1, customer: 'ACME' });
    await first.waitFor('taken');
    await waitFor('the retry to be scheduled', async () => (await producer.stats()).delayed === 1, 5000);
    await first.kill();
    expect(await producer.stats()).toMatchObject({ delayed: 1, pending: 0, waiting: 0 });

    const done: Job[] = [];
    const second = await open(prefix);
    second.consume({ work: async (job) => void done.push(job) }, { concurrency: 1 });
    await waitFor('the retry to run', () => done.length === 1, 5000);
    expect(done[0]).toMatchObject({ id, attempt: 2, payload: { ms: 1, customer: 'ACME' } });
    await second.drain({ timeoutMs: 2000 });
  });
});

describe('Redis going away mid-run', () => {
  let server: RedisServer;
  const password = 'pw-never-logged-9f3a';
  beforeAll(async () => {
    server = await startRedis({ persistent: true, password });
  });
  afterAll(async () => {
    await server.stop();
  });

  // A shared REDIS_URL server cannot be restarted by a test; CLIENT KILL below still runs on it.
  test.skipIf(Boolean(process.env.REDIS_URL))(
    'workers wait and resume after a Redis restart; every job completes once, one log line per outage',
    async () => {
      const prefix = freshPrefix('restart');
      const done: string[] = [];
      const { text, lines: records } = await captureLog(async () => {
        const q = await open(prefix, { visibilityTimeoutMs: 5000 }, server.url);
        q.consume(
          {
            work: async (job) => {
              await Bun.sleep(20);
              done.push(job.id);
            },
          },
          { concurrency: 3 },
        );
        const ids = new Set<string>();
        for (let n = 0; n < 30; n++) ids.add(await q.enqueue('work', { n }));
        await waitFor('some jobs done', () => done.length >= 6, 5000);
        let back = false;
        const restarted = server.restart(1000).then(() => {
          back = true;
        });
        await Bun.sleep(300); // Redis is down now: an enqueue is refused at once (the caller's outbox keeps the job)
        await expect(q.enqueue('work', { late: 0 })).rejects.toThrow('redis is unavailable');
        expect(back).toBe(false); // refused while Redis was still away, not after waiting for it
        await restarted;
        await waitFor(
          'the queue connected again',
          () =>
            q.ping().then(
              () => true,
              () => false,
            ),
          5000,
        );
        for (let n = 0; n < 5; n++) ids.add(await q.enqueue('work', { late: n }));
        await waitFor('every job done', () => new Set(done).size >= ids.size, 15_000);
        await q.drain({ timeoutMs: 5000 });
        expect(new Set(done)).toEqual(ids);
        expect(done.length).toBe(ids.size);
      });
      expect(text).not.toContain(password);
      expect(records.filter((r) => r.msg.startsWith('redis unavailable')).length).toBe(1);
      expect(records.some((r) => r.msg === 'redis connection restored')).toBe(true);
      expect(records.filter((r) => r.msg.includes('lease lost') || r.msg.includes('taken over'))).toEqual([]);
      expect(records.find((r) => r.msg === 'job consumer started')?.redis).toContain(':***@');
    },
  );

  test('a killed client connection (CLIENT KILL) is survived the same way', async () => {
    const prefix = freshPrefix('kill');
    const q = await open(prefix, { visibilityTimeoutMs: 5000 }, server.url);
    const done: string[] = [];
    q.consume(
      {
        work: async (job) => {
          await Bun.sleep(10);
          done.push(job.id);
        },
      },
      { concurrency: 2 },
    );
    for (let n = 0; n < 20; n++) await q.enqueue('work', { n });
    await waitFor('some jobs done', () => done.length >= 4, 5000);
    const admin = new Redis(server.url);
    const list = String(await admin.call('CLIENT', ['LIST', 'TYPE', 'normal']));
    const ours = list
      .split('\n')
      .filter((l) => l.includes(` name=${q.workerId}`))
      .map((l) => l.match(/^id=(\d+)/)?.[1]);
    expect(ours.length).toBe(2);
    for (const id of ours) await admin.call('CLIENT', ['KILL', 'ID', id as string]);
    admin.disconnect();
    await waitFor('every job done', () => done.length >= 20, 10_000);
    expect(new Set(done).size).toBe(20);
  });
});
