import type { JobQueue, QueueOptions } from '../../core/ports/queue.ts';
import type { RedisTarget } from '../../core/redis-target.ts';
import { InProcessQueue } from './in-process.ts';
import { RedisStreamsQueue } from './redis-streams.ts';

/**
 * Picks the job queue: Redis Streams when Redis is configured (REDIS_URL or REDIS_SENTINELS), else the
 * in-process queue of the embedded default. Fails if Redis does not answer within 10 s.
 */
export async function openQueue(redis: RedisTarget | undefined, options: QueueOptions = {}): Promise<JobQueue> {
  if (!redis) return new InProcessQueue(options);
  return RedisStreamsQueue.open(redis, options);
}
