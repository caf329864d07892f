import { join } from 'node:path';
import { openStorage, type SqlStorage } from '../../adapters/storage/sql-storage.ts';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { freePort } from '../support/free-port.ts';

/** The plan benchmark workspaces are on: API access, no credit or row limits, no request rate limit. */
const PLAN = 'bench';

export interface ServiceProcess {
  /** The REST base URL and an API key of a workspace of its own. */
  api: { url: string; key: string };
  /** The same database, opened in the benchmark's process (to make projects, read counters). */
  storage: SqlStorage;
  workspaceId: string;
  stop(): Promise<void>;
}

/**
 * The service as production runs it, for a benchmark: `app/main.ts` in a process of its own with
 * SERVE=rest on `databaseUrl` (and Redis when given), ready to answer; a workspace with an API key
 * made in the database first. Its output goes to `output` (a file descriptor) or stderr.
 */
export async function startServiceProcess(o: { databaseUrl: string; redisUrl?: string; output?: number }): Promise<ServiceProcess> {
  const storage = await openStorage(o.databaseUrl, { migrate: true, poolSize: 2 });
  const ws = await storage.workspaces.create({ name: 'bench', plan: PLAN });
  const { api_key } = await issueApiKey(storage.workspaces, ws.id);
  const port = freePort();
  const proc = Bun.spawn(['bun', join(import.meta.dir, '../../app/main.ts')], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SERVE: 'rest',
      PORT: String(port),
      DATABASE_URL: o.databaseUrl,
      ...(o.redisUrl ? { REDIS_URL: o.redisUrl } : {}),
      PROVIDER_MODE: 'sandbox',
      LOG_LEVEL: 'warn',
      PLANS_JSON: JSON.stringify({
        [PLAN]: { apiAccess: true, monthlyCredits: 0, maxProjects: null, maxRowsPerProject: null, requestsPerMinute: null },
      }),
    },
    stdin: 'ignore',
    stdout: o.output ?? 'ignore',
    stderr: o.output ?? 'inherit',
  });
  const stop = async () => {
    proc.kill('SIGTERM');
    await Promise.race([proc.exited, Bun.sleep(15_000)]);
    proc.kill('SIGKILL');
    await storage.close();
  };
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`http://127.0.0.1:${port}/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the service process did not get ready (exit ${proc.exitCode})`);
    }
    await Bun.sleep(100);
  }
  return { api: { url: `http://127.0.0.1:${port}/api/enterprise`, key: api_key }, storage, workspaceId: ws.id, stop };
}
