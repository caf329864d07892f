import { Database } from 'bun:sqlite';
import { afterAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../core/config.ts';
import { freshDatabaseUrl } from './support/databases.ts';
import { freshPrefix, startRedis } from './support/redis.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/** What a load balancer asks the REST host: /health (alive) and /ready (able to serve). */

const ready = async (t: TestService) => {
  const res = await fetch(`${new URL(t.url).origin}/ready`);
  return { status: res.status, body: await res.json() };
};

describe('health and readiness on the REST host', () => {
  const started: TestService[] = [];
  afterAll(async () => {
    for (const t of started) await t.stop();
  });

  test('/health answers while the process lives; /ready checks the database and its migrations', async () => {
    const databaseUrl = await freshDatabaseUrl('sqlite');
    const t = await startTestService('sqlite', { DATABASE_URL: databaseUrl });
    started.push(t);
    const origin = new URL(t.url).origin;
    const health = await fetch(`${origin}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(await ready(t)).toEqual({ status: 200, body: { status: 'ready', checks: { database: 'ok', queue: 'in-process' } } });
    // A database behind this code (a migration missing) is not ready, and says which.
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    const last = db.query('SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1').get() as { name: string };
    db.run('DELETE FROM schema_migrations WHERE name = ?', [last.name]);
    db.close();
    expect(await ready(t)).toEqual({
      status: 503,
      body: { status: 'not_ready', checks: { database: `migrations not applied: ${last.name}`, queue: 'in-process' } },
    });
  });

  test('with Redis carrying the jobs, /ready is 503 while Redis is away and 200 once it is back', async () => {
    const redis = await startRedis({ ownServer: true });
    try {
      const t = await startTestService('sqlite', { REDIS_URL: redis.url, JOB_QUEUE_PREFIX: freshPrefix('ready') });
      started.push(t);
      expect(await ready(t)).toMatchObject({ status: 200, body: { checks: { queue: 'ok' } } });
      const restarting = redis.restart(3_000);
      await Bun.sleep(500);
      const during = await ready(t);
      expect(during.status).toBe(503);
      expect(during.body.checks.database).toBe('ok');
      expect(during.body.checks.queue).not.toBe('ok');
      await restarting;
      const deadline = Date.now() + 10_000;
      let after = await ready(t);
      while (after.status !== 200 && Date.now() < deadline) {
        await Bun.sleep(100);
        after = await ready(t);
      }
      expect(after.status).toBe(200);
    } finally {
      await started.pop()?.stop();
      await redis.stop();
    }
  });
});

describe('which processes run jobs', () => {
  test('a one-door process runs no jobs when Redis carries them, and its own without Redis', () => {
    expect(loadConfig({ SERVE: 'rest', REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(0);
    expect(loadConfig({ SERVE: 'mcp', REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(0);
    expect(loadConfig({ SERVE: 'rest' }).workers).toBe(1);
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).workers).toBe(1);
    expect(loadConfig({ SERVE: 'rest', REDIS_URL: 'redis://127.0.0.1:6379', WORKERS: '2' }).workers).toBe(2);
  });
});
