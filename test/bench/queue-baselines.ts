import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { track } from './jobs-cleanup.ts';
import { CpuMeter } from './proc-cpu.ts';
import type { ConsumerStats } from './queue-consumer.ts';

/**
 * What the queue alone can do on the same Redis, with no work per job: bare Redis Streams
 * (XADD, then XREADGROUP COUNT n + one XACK per batch) and BullMQ (addBulk, Workers with a no-op
 * processor). Consumers are separate processes (queue-consumer.ts), as the service's workers are;
 * they are consuming before the clock starts, and the clock stops at the last ack/completion.
 */

const CONSUMER = resolve(import.meta.dir, 'queue-consumer.ts');
const ENQUEUE_CHUNK = 1_000;

export type QueueSystem = 'redis-streams' | 'bullmq';

export interface BaselineResult {
  system: QueueSystem;
  jobs: number;
  consumers: number;
  /** Streams: XREADGROUP COUNT; BullMQ: Worker concurrency. */
  perConsumer: number;
  /** First enqueue → last job acknowledged/completed. */
  seconds: number;
  jobsPerSecond: number;
  /** How long the enqueueing alone took (consumers already running meanwhile). */
  enqueueSeconds: number;
  /** CPU seconds the bench, its consumers and redis-server did not get: other processes' busy time plus the VM host's steal. */
  otherCpuSeconds: number;
  /** CPU seconds the run cost: the enqueuer (bench), the consumers and redis-server together. */
  cpuSeconds: number;
}

interface Consumer {
  proc: Subprocess;
  stats(): Promise<ConsumerStats>;
  stop(): Promise<void>;
}

const now = () => performance.timeOrigin + performance.now();

async function spawnConsumer(args: string[]): Promise<Consumer> {
  let onReady: () => void = () => undefined;
  let onStats: (s: ConsumerStats) => void = () => undefined;
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const proc = track(
    Bun.spawn(['bun', CONSUMER, ...args], {
      stdout: 'ignore',
      stderr: 'inherit',
      ipc: (message) => (message === 'ready' ? onReady() : onStats(message as ConsumerStats)),
    }),
  );
  const timeout = Bun.sleep(20_000).then(() => Promise.reject(new Error('queue consumer did not start within 20 s')));
  try {
    await Promise.race([ready, timeout, proc.exited.then((code) => Promise.reject(new Error(`queue consumer exited with code ${code}`)))]);
  } catch (e) {
    proc.kill('SIGKILL');
    throw e;
  }
  return {
    proc,
    stats: () =>
      new Promise<ConsumerStats>((r, reject) => {
        if (proc.exitCode !== null) return reject(new Error(`queue consumer exited with code ${proc.exitCode}`));
        const timer = setTimeout(() => reject(new Error('queue consumer did not answer within 5 s')), 5_000);
        onStats = (s) => {
          clearTimeout(timer);
          r(s);
        };
        proc.send('stats');
      }),
    async stop() {
      if (proc.exitCode === null) proc.send('stop');
      await Promise.race([proc.exited, Bun.sleep(5_000)]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await proc.exited;
    },
  };
}

/** The job payloads: the same shape as `enrich.batch` ({project_pk, col_no, seqs}), `cells / jobs` rows each. */
function payloads(jobs: number, cells: number): { project_pk: number; col_no: number; seqs: number[] }[] {
  const per = Math.max(1, Math.round(cells / jobs));
  return Array.from({ length: jobs }, (_, i) => ({
    project_pk: 1,
    col_no: 11,
    seqs: Array.from({ length: per }, (_, k) => i * per + k + 1),
  }));
}

async function waitForAll(consumers: Consumer[], jobs: number, timeoutSeconds: number): Promise<number> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const all = await Promise.all(consumers.map((c) => c.stats()));
    if (all.reduce((n, s) => n + s.done, 0) >= jobs) return Math.max(...all.map((s) => s.lastDoneAt));
    if (Date.now() > deadline) throw new Error(`queue baseline: not all ${jobs} jobs done within ${timeoutSeconds} s`);
    await Bun.sleep(10);
  }
}

export async function runBaseline(
  system: QueueSystem,
  redisUrl: string,
  prefix: string,
  o: { jobs: number; cells: number; consumers: number; perConsumer: number; timeoutSeconds: number; redisPid: number | undefined },
): Promise<BaselineResult> {
  const data = payloads(o.jobs, o.cells);
  const consumers: Consumer[] = [];
  // RESP2 (BullMQ is built for it; ioredis 6 defaults to RESP3).
  const conn = new Redis(redisUrl, { protocol: 2, maxRetriesPerRequest: null });
  const stream = `${prefix}:stream`;
  const queue = system === 'bullmq' ? new Queue('bench', { connection: conn, prefix }) : undefined;
  try {
    if (queue) await queue.waitUntilReady();
    else await conn.call('XGROUP', ['CREATE', stream, 'g', '$', 'MKSTREAM']);
    for (let i = 0; i < o.consumers; i++) {
      const args = system === 'bullmq' ? ['bullmq', redisUrl, 'bench', prefix] : ['streams', redisUrl, stream, 'g'];
      consumers.push(await spawnConsumer([...args, String(o.perConsumer)]));
    }
    const cpu = new CpuMeter({
      bench: process.pid,
      redis: o.redisPid,
      ...Object.fromEntries(consumers.map((c, i) => [`consumer ${i}`, c.proc.pid])),
    });
    const t0 = now();
    for (let i = 0; i < data.length; i += ENQUEUE_CHUNK) {
      const chunk = data.slice(i, i + ENQUEUE_CHUNK);
      if (queue) {
        await queue.addBulk(chunk.map((d) => ({ name: 'enrich', data: d, opts: { removeOnComplete: true, removeOnFail: true } })));
      } else {
        const pipe = conn.pipeline();
        for (const d of chunk) {
          const env = { id: crypto.randomUUID(), type: 'enrich.batch', payload: d, attempt: 1, enqueuedAt: Date.now() };
          pipe.call('XADD', stream, '*', 'job', JSON.stringify(env));
        }
        await pipe.exec();
      }
    }
    const enqueued = now();
    const last = await waitForAll(consumers, o.jobs, o.timeoutSeconds);
    const seconds = (last - t0) / 1000;
    const usage = cpu.read();
    const otherCpuSeconds = usage.others + usage.steal;
    const cpuSeconds = Object.values(usage.perProcess).reduce((a, b) => a + b, 0);
    return {
      system,
      jobs: o.jobs,
      consumers: o.consumers,
      perConsumer: o.perConsumer,
      seconds,
      jobsPerSecond: o.jobs / seconds,
      enqueueSeconds: (enqueued - t0) / 1000,
      otherCpuSeconds,
      cpuSeconds,
    };
  } finally {
    await Promise.all(consumers.map((c) => c.stop()));
    try {
      if (queue) {
        await queue.obliterate({ force: true });
        await queue.close();
      } else {
        await conn.del(stream);
      }
    } catch {
      // the Redis is thrown away anyway
    }
    conn.disconnect();
  }
}
