import type { JobQueue, QueueOptions } from '../../core/ports/queue.ts';
import { InProcessQueue } from './in-process.ts';
import { RedisStreamsQueue } from './redis-streams.ts';

/**
 * Picks the job queue: Redis Streams when a Redis URL is given (REDIS_URL), else the in-process queue
 * of the embedded default. Fails if Redis does not answer within 10 s.
 */
export async function openQueue(redisUrl: string | undefined, options: QueueOptions = {}): Promise<JobQueue> {
  if (!redisUrl) return new InProcessQueue(options);
  return RedisStreamsQueue.open(redisUrl, options);
}
