import { Redis } from 'ioredis';
import type { RateLimiter } from '../../core/ports/rate-limiter.ts';
import { FallbackRateLimiter } from './fallback-rate-limiter.ts';
import { InProcessRateLimiter } from './in-process.ts';
import { RedisRateLimiter } from './redis-token-bucket.ts';

/**
 * Token buckets shared through Redis when a Redis URL is given (every process spends one budget),
 * falling back to this process's buckets while Redis is away; else in memory.
 */
export function openRateLimiter(redisUrl: string | undefined, prefix = 'wfs'): RateLimiter {
  if (!redisUrl) return new InProcessRateLimiter();
  // No offline queue and one try: a take while Redis is away fails at once and the fallback answers.
  const redis = new Redis(redisUrl, { protocol: 2, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // the queue's connection logs outages once; this one stays quiet
  return new FallbackRateLimiter(new RedisRateLimiter(redis, `${prefix}:rate`), new InProcessRateLimiter(), () => redis.status === 'ready');
}
