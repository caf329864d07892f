import { Redis } from 'ioredis';
import type { RateLimiter } from '../../core/jobs/rate-limiter.ts';
import { InMemoryRateLimiter } from './in-memory.ts';
import { RedisRateLimiter } from './redis-token-bucket.ts';

/** Token buckets shared through Redis when a Redis URL is given (every process spends one budget), else in memory. */
export function openRateLimiter(redisUrl: string | undefined, prefix = 'wfs'): RateLimiter {
  if (!redisUrl) return new InMemoryRateLimiter();
  const redis = new Redis(redisUrl, { protocol: 2, maxRetriesPerRequest: 3 });
  redis.on('error', () => undefined); // the queue's connection logs outages once; this one stays quiet
  return new RedisRateLimiter(redis, `${prefix}:rate`);
}
