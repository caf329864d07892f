import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { openProjectEvents } from '../adapters/events/open-project-events.ts';
import { openStatsBoard } from '../adapters/metrics/worker-stats-boards.ts';
import { openQueue } from '../adapters/queue/open-queue.ts';
import { openRateLimiter } from '../adapters/rate-limit/open-rate-limiter.ts';
import { describeRedis } from '../adapters/redis/redis-client.ts';
import { loadConfig } from '../core/config.ts';
import type { ProjectEventBus, StoredEvent } from '../core/ports/project-events.ts';
import type { WorkerStatsBoard } from '../core/metrics/worker-stats.ts';
import type { JobQueue, QueueStats } from '../core/ports/queue.ts';
import type { RateLimiter } from '../core/ports/rate-limiter.ts';
import type { RedisTarget } from '../core/redis-target.ts';
import { captureLog } from './support/capture-log.ts';
import { freshPrefix } from './support/redis.ts';
import { type SentinelSet, startSentinelSet } from './support/sentinel.ts';
import { until } from './support/until.ts';

/**
 * Sentinel mode (REDIS_SENTINELS, REDIS_SENTINEL_NAME; docs/operations.md): the variables, and every
 * use of Redis — job queue, project events, shared rate limits, worker stats — reaching the primary
 * through the sentinels, then the replica they promote once the primary is killed -9.
 */

const ROOT = resolve(import.meta.dir, '..');

describe('REDIS_SENTINELS and REDIS_SENTINEL_NAME', () => {
  const sentinels = { REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26380,[::1]:26381', REDIS_SENTINEL_NAME: 'wfs' };

  test('name the primary through its sentinels; with it a door-only process leaves jobs to the workers, as with REDIS_URL', () => {
    const config = loadConfig({ ...sentinels, REDIS_PASSWORD: 'data-secret', REDIS_SENTINEL_PASSWORD: 'sentinel-secret', SERVE: 'rest' });
    expect(config.redis).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      name: 'wfs',
      password: 'data-secret',
      sentinelPassword: 'sentinel-secret',
    });
    expect(config.workers).toBe(0);
    expect(loadConfig({}).redis).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://:pw@127.0.0.1:6379' }).redis).toBe('redis://:pw@127.0.0.1:6379');
  });

  test('a value that cannot work is refused at start, naming the variable', () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refused({ REDIS_SENTINELS: '10.0.0.1:26379' })).toContain('REDIS_SENTINEL_NAME is needed with REDIS_SENTINELS');
    for (const bad of ['10.0.0.1', '10.0.0.1:0', '10.0.0.1:70000', ':26379', '10.0.0.1:port', '::1:26379']) {
      expect(refused({ REDIS_SENTINELS: bad, REDIS_SENTINEL_NAME: 'wfs' })).toContain(`REDIS_SENTINELS must be a comma list of host:port`);
    }
    expect(refused({ ...sentinels, REDIS_URL: 'redis://127.0.0.1:6379' })).toContain('not both');
    expect(refused({ REDIS_SENTINEL_NAME: 'wfs' })).toContain('set REDIS_SENTINELS too');
    expect(refused({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PASSWORD: 'x' })).toContain('put the password in REDIS_URL');
  });

  test('logs and errors name the target without its passwords', () => {
    const config = loadConfig({ ...sentinels, REDIS_PASSWORD: 'data-secret', REDIS_SENTINEL_PASSWORD: 'sentinel-secret' });
    expect(describeRedis(config.redis as RedisTarget)).toBe('sentinel:wfs@10.0.0.1:26379,10.0.0.2:26380,[::1]:26381');
    expect(describeRedis('redis://:url-secret@127.0.0.1:6379')).not.toContain('url-secret');
  });

  test('every Redis connection of the service is made in one place (adapters/redis/redis-client.ts), so Sentinel mode reaches all', () => {
    const sources = ['app', 'core', 'doors', 'adapters', 'sdk', 'plugins', 'scripts'].flatMap((d) => files(join(ROOT, d)));
    const makers = sources.filter((f) => /new Redis\(|new IORedis\(|Redis\.createClient/.test(readFileSync(f, 'utf8')));
    expect(makers.map((f) => relative(ROOT, f))).toEqual(['adapters/redis/redis-client.ts']);
  });
});

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : files(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('through a primary, a replica and three sentinels', () => {
  let set: SentinelSet;
  let target: RedisTarget;
  const prefix = freshPrefix('sentinel');
  const handled: string[] = [];
  let queue: JobQueue;
  let events: [ProjectEventBus, ProjectEventBus];
  let limiters: [RateLimiter, RateLimiter];
  let boards: [WorkerStatsBoard, WorkerStatsBoard];
  let log = '';

  beforeAll(async () => {
    set = await startSentinelSet();
    target = loadConfig(set.env).redis as RedisTarget;
    log = (
      await captureLog(async () => {
        queue = await openQueue(target, { prefix: `${prefix}:jobs`, workerId: 'sentinel-test', blockMs: 200, pollIntervalMs: 100 });
        const note = async (job: { payload: unknown }) => {
          handled.push((job.payload as { n: string }).n);
        };
        queue.consume({ note }, { concurrency: 2 });
      })
    ).text;
    events = [openProjectEvents(target, prefix), openProjectEvents(target, prefix)];
    limiters = [openRateLimiter(target, prefix), openRateLimiter(target, prefix)];
    boards = [openStatsBoard(target, prefix), openStatsBoard(target, prefix)];
  }, 60_000);

  afterAll(async () => {
    await queue?.close();
    for (const e of events ?? []) await e.close();
    for (const l of limiters ?? []) await l.close();
    for (const b of boards ?? []) await b.close();
    await set?.stop();
  });

  /** Each use of Redis, checked as its callers see it; `round` keeps the keys of each round apart. */
  async function everyUseWorks(round: string): Promise<void> {
    // The queue: a job enqueued is handled.
    await until(async () => {
      await queue.enqueue('note', { n: round }, { id: `job-${round}` }).catch(() => undefined);
      return handled.includes(round);
    }, 30_000);
    // Project events: published by one process, seen by another.
    // (A watch that cannot start, Redis being away a moment more, says reset: the watcher starts again, as an SSE client does.)
    const got: StoredEvent[] = [];
    let reset = true;
    let stop = () => {};
    await until(() => {
      if (reset) {
        reset = false;
        stop = events[1].watch(7, undefined, { onEvent: (e) => got.push(e), onReset: () => (reset = true) });
      }
      events[0].publish(7, { type: 'rows', added: 1, deleted: 0 });
      return got.length > 0;
    }, 30_000);
    stop();
    // Rate limits: one bucket shared by both processes (not each its own, as while Redis is away).
    const rule = { perSecond: 0.001, burst: 2 };
    await until(async () => {
      const key = `bucket-${round}-${Math.random()}`;
      const takes = [await limiters[0].take(key, rule), await limiters[1].take(key, rule), await limiters[0].take(key, rule)];
      return takes[2]?.waitMs !== undefined && takes[2].waitMs > 0;
    }, 30_000);
    // Worker stats: published by one process, listed by another.
    const stats = { workerId: `w-${round}`, waiting: 0, delayed: 0, pending: 0, dead: 0, running: 0, processed: 0, failed: 0 };
    await until(async () => {
      await boards[0]
        .publish({ ...stats, deadLettered: 0, latency: { count: 0, sumMs: 0, maxMs: 0 } } as QueueStats)
        .catch(() => undefined);
      return (await boards[1].all().catch(() => [])).some((s) => s.workerId === `w-${round}`);
    }, 30_000);
  }

  test('the queue, project events, rate limits and worker stats use the primary, and the replica Sentinel promotes after kill -9', async () => {
    await everyUseWorks('before');
    const before = queue.serverId?.();
    expect(before).toMatch(/^[0-9a-f]{40}$/);
    expect(log).toContain(`sentinel:${set.name}@127.0.0.1:`);
    expect(log).not.toContain(set.password);

    const old = await set.killPrimary();
    const promoted = await set.waitForPromotion(old);
    expect(promoted.port).not.toBe(old.port);
    await everyUseWorks('after');
    // The queue knows it is on another server now: the outbox hands over again what the old one took lately.
    expect(queue.serverId?.()).toMatch(/^[0-9a-f]{40}$/);
    expect(queue.serverId?.()).not.toBe(before);
  }, 90_000);
});
