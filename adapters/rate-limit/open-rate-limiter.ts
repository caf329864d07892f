import type { RateLimiter } from '../../core/ports/rate-limiter.ts';
import type { RedisTarget } from '../../core/redis-target.ts';
import { openRedis } from '../redis/redis-client.ts';
import { FallbackRateLimiter } from './fallback-rate-limiter.ts';
import { InProcessRateLimiter } from './in-process.ts';
import { RedisRateLimiter } from './redis-token-bucket.ts';

/**
 * Token buckets shared through Redis when it is configured (every process spends one budget),
 * falling back to this process's buckets while Redis is away; else in memory.
 */
export function openRateLimiter(target: RedisTarget | undefined, prefix = 'wfs'): RateLimiter {
  if (!target) return new InProcessRateLimiter();
  // No offline queue and one try: a take while Redis is away fails at once and the fallback answers.
  const redis = openRedis(target, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // the queue's connection logs outages once; this one stays quiet
  return new FallbackRateLimiter(new RedisRateLimiter(redis, `${prefix}:rate`), new InProcessRateLimiter(), () => redis.status === 'ready');
}
