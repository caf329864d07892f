import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Redis } from 'ioredis';
import { InProcessRateLimiter } from '../adapters/rate-limit/in-process.ts';
import { RedisRateLimiter } from '../adapters/rate-limit/redis-token-bucket.ts';
import { pauseBucket, type RateLimiter, takeToken } from '../core/ports/rate-limiter.ts';
import { freshPrefix, type RedisServer, startRedis } from './support/redis.ts';

describe('token bucket arithmetic', () => {
  test('a full bucket gives `burst` tokens at once, then one per 1/perSecond', () => {
    const rule = { perSecond: 10, burst: 2 };
    let s = takeToken(undefined, rule, 0);
    expect(s.waitMs).toBe(0);
    s = takeToken(s.state, rule, 0);
    expect(s.waitMs).toBe(0);
    s = takeToken(s.state, rule, 0);
    expect(s.waitMs).toBe(100);
    expect(takeToken(s.state, rule, 100).waitMs).toBe(0);
  });

  test('a paused bucket gives its next token when the pause ends; a longer pause already there stays', () => {
    const rule = { perSecond: 10, burst: 5 };
    const paused = pauseBucket(undefined, rule, 0, 2000);
    expect(takeToken(paused, rule, 0).waitMs).toBe(2000);
    expect(takeToken(paused, rule, 1999).waitMs).toBeGreaterThan(0);
    expect(takeToken(paused, rule, 2000).waitMs).toBe(0);
    expect(takeToken(pauseBucket(paused, rule, 500, 100), rule, 500).waitMs).toBe(1500);
  });

  test('an idle bucket refills only up to burst', () => {
    const rule = { perSecond: 10, burst: 3 };
    const s = takeToken({ tokens: 0, at: 0 }, rule, 60_000);
    expect(s.state.tokens).toBe(2);
  });
});

let redis: RedisServer;
const clients: Redis[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis.stop();
});

function redisLimiter(prefix: string): RateLimiter {
  const c = new Redis(redis.url);
  clients.push(c);
  return new RedisRateLimiter(c, prefix);
}

async function timeTokens(limiters: RateLimiter[], key: string, n: number): Promise<number> {
  const rule = { perSecond: 20, burst: 5 };
  const start = performance.now();
  await Promise.all(Array.from({ length: n }, (_, i) => (limiters[i % limiters.length] as RateLimiter).acquire(key, rule)));
  return performance.now() - start;
}

describe.each(['in-process', 'redis'] as const)('%s rate limiter', (kind) => {
  test('15 requests at 20/s with a burst of 5 take about half a second', async () => {
    const limiter = kind === 'redis' ? redisLimiter(freshPrefix('rate')) : new InProcessRateLimiter();
    const ms = await timeTokens([limiter], 'provider:test', 15);
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(5_000); // a hang, not a slow machine (10× the half second)
  });

  test('looking (cost 0) takes nothing: it tells whether a token is there', async () => {
    const limiter = kind === 'redis' ? redisLimiter(freshPrefix('rate')) : new InProcessRateLimiter();
    const rule = { perSecond: 0.01, burst: 2 };
    for (let i = 0; i < 5; i++) expect((await limiter.take('k', rule, 0)).waitMs).toBe(0);
    expect((await limiter.take('k', rule)).waitMs).toBe(0);
    expect((await limiter.take('k', rule)).waitMs).toBe(0);
    const look = await limiter.take('k', rule, 0);
    expect(look.waitMs).toBeGreaterThan(0);
    expect((await limiter.take('k', rule)).waitMs).toBeGreaterThan(0);
  });

  test('a pause (a provider’s Retry-After) gives no token until it ends, and a long one is refused as retryable', async () => {
    const limiter = kind === 'redis' ? redisLimiter(freshPrefix('rate')) : new InProcessRateLimiter();
    const rule = { perSecond: 50, burst: 10 };
    await limiter.pause('provider:x', rule, 400);
    const look = await limiter.take('provider:x', rule, 0);
    expect(look.waitMs).toBeGreaterThan(300);
    expect(look.waitMs).toBeLessThanOrEqual(400);
    await limiter.pause('provider:x', rule, 100); // shorter: the 400 ms pause stays
    expect((await limiter.take('provider:x', rule, 0)).waitMs).toBeGreaterThan(300);
    const refused = await limiter.acquire('provider:x', rule, undefined, 200).catch((e) => e);
    expect(refused).toMatchObject({ retryable: true });
    expect(refused.retryAfterMs).toBeGreaterThan(200);
    const start = performance.now();
    await limiter.acquire('provider:x', rule);
    expect(performance.now() - start).toBeGreaterThanOrEqual(150);
    expect((await limiter.take('provider:y', rule)).waitMs).toBe(0); // other providers go on
  });

  test('an aborted wait rejects at once', async () => {
    const limiter = kind === 'redis' ? redisLimiter(freshPrefix('rate')) : new InProcessRateLimiter();
    const rule = { perSecond: 0.1, burst: 1 };
    await limiter.acquire('k', rule);
    const controller = new AbortController();
    const waiting = limiter.acquire('k', rule, controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
  });
});

test('two processes sharing one Redis share one budget', async () => {
  const prefix = freshPrefix('rate');
  const ms = await timeTokens([redisLimiter(prefix), redisLimiter(prefix)], 'provider:shared', 15);
  // Two separate budgets would finish in ~250 ms; one shared budget needs ~500 ms.
  expect(ms).toBeGreaterThanOrEqual(450);
});
