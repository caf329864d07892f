import { Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * A no-op consumer process for the queue baselines (spawned by queue-baselines.ts):
 *   bun queue-consumer.ts streams <redisUrl> <stream> <group> <count>   XREADGROUP COUNT n, then one XACK of the batch
 *   bun queue-consumer.ts bullmq <redisUrl> <queue> <prefix> <concurrency>   a BullMQ Worker with a no-op processor
 * It says "ready" over IPC once consuming; on "stats" it answers { done, lastDoneAt }; on "stop" it exits.
 */

export interface ConsumerStats {
  done: number;
  /** Wall clock (ms, sub-ms precision) when the last job was acknowledged / completed. */
  lastDoneAt: number;
}

const [mode, url, name, extra, size] = process.argv.slice(2) as [string, string, string, string, string];
const stats: ConsumerStats = { done: 0, lastDoneAt: 0 };
const now = () => performance.timeOrigin + performance.now();
let stopping = false;
let stop: () => Promise<void> = async () => undefined;

async function streams(): Promise<void> {
  // RESP2, as the service's queue uses (ioredis 6 defaults to RESP3, whose XREADGROUP reply is a map).
  const conn = new Redis(url, { protocol: 2, maxRetriesPerRequest: null });
  const consumer = `c-${process.pid}`;
  stop = async () => {
    conn.disconnect();
  };
  process.send?.('ready');
  while (!stopping) {
    const reply = (await conn.call('XREADGROUP', ['GROUP', extra, consumer, 'COUNT', size, 'BLOCK', 100, 'STREAMS', name, '>'])) as
      | [string, [string, string[]][]][]
      | null;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) continue;
    await conn.call('XACK', [name, extra, ...entries.map(([id]) => id)]);
    stats.done += entries.length;
    stats.lastDoneAt = now();
  }
}

async function bullmq(): Promise<void> {
  const url0 = new URL(url);
  const worker = new Worker(name, async () => undefined, {
    connection: { host: url0.hostname, port: Number(url0.port), protocol: 2, maxRetriesPerRequest: null },
    prefix: extra,
    concurrency: Number(size),
  });
  worker.on('completed', () => {
    stats.done++;
    stats.lastDoneAt = now();
  });
  worker.on('error', (e) => process.stderr.write(`bullmq worker error: ${e.message}\n`));
  stop = () => worker.close();
  await worker.waitUntilReady();
  process.send?.('ready');
}

process.on('message', (message) => {
  if (message === 'stats') process.send?.(stats);
  if (message === 'stop') {
    stopping = true;
    void stop().finally(() => process.exit(0));
  }
});

(mode === 'bullmq' ? bullmq() : streams()).catch((e) => {
  if (stopping) return;
  process.stderr.write(`consumer failed: ${(e as Error).stack}\n`);
  process.exit(1);
});
