import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type SqlStorage } from '../../adapters/storage/sql-storage.ts';
import { loadConfig } from '../../core/config.ts';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { type RunningService, startService } from '../../app/service.ts';
import { createDatabase, type MariaDbServer, startMariaDb } from '../support/mariadb.ts';
import { startRedis } from '../support/redis.ts';
import { CleanupSteps } from './jobs-cleanup.ts';

/** One database plus the real service on it (in-process, port 0), and a workspace key. */
export type BenchDialect = 'mysql' | 'sqlite';

const BENCH_PLAN = 'bench';

export interface Backend {
  dialect: BenchDialect;
  /** Where the data lives, for the report (no credentials). */
  where: string;
  service: RunningService;
  storage: SqlStorage;
  /** The same database as another process sees it: its own pool and memory (writes the service did not make). */
  otherProcess: SqlStorage;
  url: string;
  key: string;
  workspaceId: string;
  stop(): Promise<void>;
}

async function databaseUrl(dialect: BenchDialect, cleanup: CleanupSteps): Promise<{ url: string; where: string }> {
  const name = `bench_${process.pid}_${Date.now().toString(36)}`;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'wfs-bench-sqlite-'));
    cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
    return { url: `sqlite:${join(dir, `${name}.sqlite`)}`, where: 'SQLite temp file (WAL)' };
  }
  if (process.env.MYSQL_URL) {
    const server = process.env.MYSQL_URL.replace(/\/[^/]*$/, '');
    return { url: await createDatabase(server, name), where: `MYSQL_URL server, database ${name} (left in place)` };
  }
  const mariadb: MariaDbServer = await startMariaDb({ flushEachCommit: true, bufferPoolMb: 2048 });
  cleanup.add(() => mariadb.stop());
  return { url: await createDatabase(mariadb.url, name), where: 'throwaway mariadbd (flush each commit, 2 GB buffer pool)' };
}

/** `workers`: job workers inside the service (default 0: the benches that measure REST run none). */
export async function startBackend(dialect: BenchDialect, options: { workers?: number } = {}): Promise<Backend> {
  const cleanup = new CleanupSteps();
  try {
    const { url: databaseUrlValue, where } = await databaseUrl(dialect, cleanup);
    // BENCH_REDIS=1: jobs and project events through Redis, as a production deployment runs them.
    let redisUrl: string | undefined;
    if (dialect === 'mysql' && process.env.BENCH_REDIS === '1') {
      const redis = await startRedis({ ownServer: true });
      cleanup.add(() => redis.stop());
      redisUrl = redis.url;
    }
    // REST only (SERVE=rest; MCP_PORT=0 in case the MCP host starts anyway): the bench measures REST.
    const config = loadConfig({
      PROVIDER_MODE: 'sandbox',
      WORKERS: String(options.workers ?? 0),
      SERVE: 'rest',
      MCP_PORT: '0',
      LOG_LEVEL: 'warn',
      // A plan like pro without its per-key rate limit (pro: 1,200 requests/min) or row cap.
      PLANS_JSON: JSON.stringify({
        [BENCH_PLAN]: { apiAccess: true, monthlyCredits: 0, maxProjects: null, maxRowsPerProject: null, requestsPerMinute: null },
      }),
      DATABASE_URL: databaseUrlValue,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
      PORT: '0',
    });
    const service = await startService(config);
    cleanup.add(() => service.stop());
    const storage = service.kernel.storage as SqlStorage;
    const otherProcess = await openStorage(databaseUrlValue, { migrate: false, poolSize: 2 });
    cleanup.add(() => otherProcess.close());
    const ws = await storage.workspaces.create({ name: 'bench', plan: BENCH_PLAN });
    const { api_key } = await issueApiKey(storage.workspaces, ws.id);
    return {
      dialect,
      where: redisUrl ? `${where}, jobs and events through a throwaway redis-server` : where,
      service,
      storage,
      otherProcess,
      url: service.restUrl as string,
      key: api_key,
      workspaceId: ws.id,
      stop: () => cleanup.run(),
    };
  } catch (e) {
    await cleanup.run();
    throw e;
  }
}
