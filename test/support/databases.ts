import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, type MariaDbServer, startMariaDb } from './mariadb.ts';
import { freshPrefix, type RedisServer, startRedis } from './redis.ts';

/**
 * The databases every suite runs on: SQLite (a temp file) and MariaDB/MySQL (MYSQL_URL when given,
 * else one throwaway `mariadbd` per test run). TEST_DIALECTS=sqlite limits a local run.
 */
export type Dialect = 'sqlite' | 'mysql';

export const DIALECTS: Dialect[] = (process.env.TEST_DIALECTS?.split(',') as Dialect[] | undefined) ?? ['sqlite', 'mysql'];

let server: Promise<MariaDbServer> | undefined;
let redis: Promise<RedisServer> | undefined;
let counter = 0;

function mysqlServerUrl(): Promise<string> {
  if (process.env.MYSQL_URL) return Promise.resolve(process.env.MYSQL_URL.replace(/\/[^/]*$/, ''));
  server ??= startMariaDb();
  return server.then((s) => s.url);
}

/** A new, empty database of this dialect. */
export async function freshDatabaseUrl(dialect: Dialect): Promise<string> {
  const name = `t_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;
  if (dialect === 'sqlite') return `sqlite:${join(mkdtempSync(join(tmpdir(), 'wfs-sqlite-')), `${name}.sqlite`)}`;
  return createDatabase(await mysqlServerUrl(), name);
}

/**
 * The job queue that goes with a dialect: SQLite runs use the in-process queue, MariaDB runs a
 * throwaway `redis-server` (REDIS_URL when given) with a key prefix of their own — so the whole
 * suite runs once embedded and once as in production.
 */
export async function queueEnv(dialect: Dialect): Promise<Record<string, string>> {
  if (dialect === 'sqlite') return {};
  redis ??= startRedis();
  return { REDIS_URL: (await redis).url, JOB_QUEUE_PREFIX: freshPrefix('svc') };
}

/** Stops the throwaway servers (the test preload calls this once, after every suite). */
export async function stopTestDatabases(): Promise<void> {
  if (server) await (await server).stop();
  if (redis) await (await redis).stop();
  server = undefined;
  redis = undefined;
}
