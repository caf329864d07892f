import type { Redis } from 'ioredis';
import type { QueueStats } from '../../core/ports/queue.ts';
import type { RedisTarget } from '../../core/redis-target.ts';
import { openRedis } from '../redis/redis-client.ts';
import type { WorkerStatsBoard } from '../../core/metrics/worker-stats.ts';

/** The embedded default: one process, whose counters are whatever it published last. */
export class LocalStatsBoard implements WorkerStatsBoard {
  private latest: QueueStats | undefined;

  async publish(stats: QueueStats): Promise<void> {
    this.latest = stats;
  }

  async all(): Promise<QueueStats[]> {
    return this.latest ? [this.latest] : [];
  }

  async close(): Promise<void> {}
}

/** Each process writes its counters under `<prefix>:workers:<id>` with a short expiry; a dead worker drops out. */
export class RedisStatsBoard implements WorkerStatsBoard {
  private readonly redis: Redis;

  constructor(
    target: RedisTarget,
    private readonly prefix: string,
    private readonly ttlMs = 30_000,
  ) {
    this.redis = openRedis(target, { maxRetriesPerRequest: 2 });
    this.redis.on('error', () => undefined); // the queue's connection reports outages
  }

  async publish(stats: QueueStats): Promise<void> {
    await this.redis.set(`${this.prefix}:workers:${stats.workerId}`, JSON.stringify(stats), 'PX', this.ttlMs);
  }

  async all(): Promise<QueueStats[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}:workers:*`, 'COUNT', 200);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    if (keys.length === 0) return [];
    const values = await this.redis.mget(keys);
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as QueueStats);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export function openStatsBoard(redis: RedisTarget | undefined, prefix: string): WorkerStatsBoard {
  return redis ? new RedisStatsBoard(redis, prefix) : new LocalStatsBoard();
}
