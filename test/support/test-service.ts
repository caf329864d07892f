import type { Subprocess } from 'bun';
import { resolve } from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { type RunningService, startService } from '../../app/service.ts';
import { type Dialect, freshDatabaseUrl, queueEnv } from './databases.ts';

/** A running service on a fresh database, a workspace key, and a small HTTP client for it. */
export interface TestService {
  service: RunningService;
  url: string;
  key: string;
  workspaceId: string;
  /** Calls the REST API with the test key (or `headers` overriding it). */
  api(
    method: string,
    path: string,
    init?: { body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** A second workspace with its own key (tenant isolation tests). */
  newWorkspace(plan?: string, credits?: number): Promise<{ workspaceId: string; key: string }>;
  stop(): Promise<void>;
}

export async function startTestService(dialect: Dialect, env: Record<string, string> = {}): Promise<TestService> {
  const config = loadConfig({
    PROVIDER_MODE: 'sandbox',
    JOB_BACKOFF_MS: '50',
    // Jobs on the test's own thread, so that tests may reach into the kernel and process.env as the
    // jobs see them; the job thread of `bun run start` has suites of its own (embedded-thread, start, embedded-restart).
    JOB_THREAD: '0',
    ...(await queueEnv(dialect)),
    ...env,
    // A fresh database of the dialect, unless the test brings its own (a server it takes away).
    DATABASE_URL: env.DATABASE_URL ?? (await freshDatabaseUrl(dialect)),
    PORT: '0',
  });
  const service = await startService(config);
  const repo = service.kernel.storage.workspaces;
  const newWorkspace = async (plan = 'pro', credits = 1_000_000) => {
    const ws = await repo.create({ name: `ws-${plan}`, plan });
    const { api_key } = await issueApiKey(repo, ws.id);
    if (credits > 0) await service.kernel.storage.credits.grant(ws.id, credits, { note: 'test' });
    return { workspaceId: ws.id, key: api_key };
  };
  const main = await newWorkspace();
  const url = service.restUrl as string;
  return {
    service,
    url,
    key: main.key,
    workspaceId: main.workspaceId,
    newWorkspace,
    async api(method, path, init = {}) {
      const headers: Record<string, string> = { 'service-api-key': main.key, accept: 'application/json' };
      let body: string | undefined = init.rawBody;
      if (init.body !== undefined) {
        body = JSON.stringify(init.body);
        headers['content-type'] = 'application/json';
      }
      Object.assign(headers, init.headers);
      for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers };
    },
    stop: () => service.stop(),
  };
}

/** Polls until the project's builder is no longer queued or running. */
export async function waitForBuilder(t: TestService, projectId: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await t.api('GET', `/projects/${projectId}`);
    if (r.status !== 200) throw new Error(`GET project answered ${r.status}: ${JSON.stringify(r.body)}`);
    if (!['queued', 'running'].includes(r.body.builder_status.type)) return r.body;
    await Bun.sleep(25);
  }
  throw new Error(`builder of ${projectId} still running after ${timeoutMs} ms`);
}

export const enc = (v: unknown): string => encodeURIComponent(JSON.stringify(v));

/**
 * A `bun run worker` process on the test service's database and Redis queue (a MariaDB service
 * started with WORKERS=0): the jobs then run apart from the API, as in production. `env` adds to it.
 */
export function spawnWorkerOf(t: TestService, env: Record<string, string> = {}): Subprocess {
  return spawnProcessOf(t, 'app/worker.ts', env);
}

/** Another process of the test service's deployment (`app/main.ts` with its SERVE, a worker…): same database, Redis and queue. */
export function spawnProcessOf(t: TestService, script: string, env: Record<string, string> = {}): Subprocess {
  const c = t.service.kernel.config;
  return Bun.spawn(['bun', script], {
    cwd: resolve(import.meta.dir, '../..'),
    env: {
      ...process.env,
      ...env,
      DATABASE_URL: c.databaseUrl,
      REDIS_URL: c.redis as string,
      JOB_QUEUE_PREFIX: c.queue.prefix as string,
      PROVIDER_MODE: 'sandbox',
      LOG_LEVEL: 'silent',
    },
    stdout: 'ignore',
    stderr: 'ignore',
  });
}
