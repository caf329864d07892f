import type { Redis } from 'ioredis';
import { acquireToken, type RateLimiter, type RateRule, type Take, type TakeCost } from '../../core/ports/rate-limiter.ts';

/**
 * One token bucket per key in Redis, taken atomically by a Lua script that reads Redis's own clock,
 * so every worker process shares the budget whatever their clocks say. Returns the ms to wait and the
 * tokens left in thousandths (Lua numbers reach Redis as integers).
 */
const TAKE = `
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
local wait = 0
if cost < 0 then tokens = math.min(burst, tokens - cost)
elseif tokens >= 1 then tokens = tokens - cost else wait = math.ceil((1 - tokens) / rate * 1000) end
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', key, math.ceil((burst - tokens) / rate * 1000) + 60000)
return {wait, math.floor(tokens * 1000)}
`;

/**
 * Pauses a bucket for ARGV[3] ms (core/ports/rate-limiter.ts pauseBucket, on Redis's clock): as many
 * tokens owed as that time refills; a deeper debt stays. The key lives until the bucket is full again.
 */
const PAUSE = `
local key = KEYS[1]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local ms = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + (now - at) / 1000 * rate, 1 - ms / 1000 * rate)
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', key, math.ceil((burst - tokens) / rate * 1000) + 60000)
return 1
`;

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'wfs:rate',
  ) {
    redis.defineCommand('wfsTakeToken', { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand('wfsPauseBucket', { numberOfKeys: 1, lua: PAUSE });
  }

  async take(key: string, rule: RateRule, cost: TakeCost = 1): Promise<Take> {
    const redis = this.redis as unknown as { wfsTakeToken(k: string, r: number, b: number, c: number): Promise<[number, number]> };
    const [waitMs, milliTokens] = await redis.wfsTakeToken(`${this.prefix}:${key}`, rule.perSecond, rule.burst, cost);
    return { waitMs: Number(waitMs), tokens: Number(milliTokens) / 1000 };
  }

  acquire(key: string, rule: RateRule, signal?: AbortSignal, maxWaitMs?: number): Promise<void> {
    return acquireToken(this, key, rule, signal, maxWaitMs);
  }

  async pause(key: string, rule: RateRule, ms: number): Promise<void> {
    const redis = this.redis as unknown as { wfsPauseBucket(k: string, r: number, b: number, ms: number): Promise<number> };
    await redis.wfsPauseBucket(`${this.prefix}:${key}`, rule.perSecond, rule.burst, Math.round(ms));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
