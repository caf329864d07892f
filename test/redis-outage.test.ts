import { afterAll, beforeAll, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { loadConfig } from '../core/config.ts';
import type { Kernel } from '../core/kernel.ts';
import { issueApiKey } from '../core/identity/api-keys.ts';
import { createKernel, type RunningService, startService, startWorkers } from '../app/service.ts';
import { connect, data } from './mcp/mcp-support.ts';
import { createDatabase, type MariaDbServer, startMariaDb } from './support/mariadb.ts';
import { freshPrefix, type RedisServer, startRedis } from './support/redis.ts';

/**
 * Redis stopped for 10 s under an API + MCP process and a separate worker (docs/scaling.md): reads answer,
 * writes that start work are accepted through both doors, their jobs wait in the outbox and run
 * once Redis is back — every builder row and every cell exactly once.
 */
let db: MariaDbServer;
let redis: RedisServer;
let service: RunningService;
let worker: Kernel;
let stopWorker: () => void;
let key: string;
let mcp: Client;

const env = () => ({
  DATABASE_URL: '',
  REDIS_URL: redis.url,
  PROVIDER_MODE: 'sandbox',
  PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/plugins'),
  JOB_BACKOFF_MS: '200',
  JOB_MAX_ATTEMPTS: '30',
});

beforeAll(async () => {
  db = await startMariaDb({ bufferPoolMb: 128 });
  redis = await startRedis({ persistent: true, ownServer: true });
  const base = { ...env(), DATABASE_URL: await createDatabase(db.url, 'redis_outage'), JOB_QUEUE_PREFIX: freshPrefix('outage') };
  // The doors run no jobs (WORKERS=0): every job must travel through Redis to the worker.
  service = await startService(loadConfig({ ...base, PORT: '0', MCP_PORT: '0', WORKERS: '0' }));
  worker = await createKernel(loadConfig({ ...base, WORKERS: '4' }));
  stopWorker = startWorkers(worker);
  const ws = await service.kernel.storage.workspaces.create({ name: 'outage', plan: 'pro' });
  key = (await issueApiKey(service.kernel.storage.workspaces, ws.id)).api_key;
  await service.kernel.storage.credits.grant(ws.id, 100_000);
  mcp = await connect(service.mcpUrl as string, { 'service-api-key': key });
});

afterAll(async () => {
  await mcp?.close();
  stopWorker?.();
  await worker?.queue.close();
  await worker?.expressions.close();
  await worker?.rateLimiter.close();
  await worker?.statsBoard.close();
  await worker?.storage.close();
  await service?.stop();
  await redis?.stop();
  await db?.stop();
});

async function api(method: string, path: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(`${service.restUrl}${path}`, {
    method,
    headers: { 'service-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers, ms: performance.now() - started };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const built = (projectId: string) =>
  until(`project ${projectId} built`, async () => {
    const p = await api('GET', `/projects/${projectId}`);
    return p.body.builder_status?.type === 'completed' ? p.body : undefined;
  });

async function metrics(): Promise<string> {
  return (await fetch(`${new URL(service.restUrl as string).origin}/metrics`)).text();
}

test('with Redis stopped for 10 s, both doors answer and accept work; it all runs once Redis is back, each row and cell once', async () => {
  // Before the outage: a project with an auto-run tool column and one run by hand.
  const a = await api('POST', '/projects', { builder_id: 'manual_list_builder', form_data: { companies: 'Acme\nGlobex\nInitech' } });
  expect(a.status).toBe(201);
  const projectA = a.body.project_id as string;
  await built(projectA);
  const auto = await api('POST', `/projects/${projectA}/columns`, {
    name: 'Auto',
    tool_id: 'attempt_lookup',
    config: { key: '{{Name}}', answer: 'auto' },
    auto_run: true,
  });
  expect(auto.status).toBe(201);
  const manual = await api('POST', `/projects/${projectA}/columns`, {
    name: 'Manual',
    tool_id: 'attempt_lookup',
    config: { key: '{{Name}}', answer: 'manual' },
  });
  expect(manual.status).toBe(201);

  const back = redis.restart(10_000);
  await Bun.sleep(300);

  // Reads answer at once, whatever Redis does.
  const list = await api('GET', '/projects');
  expect(list.status).toBe(200);
  expect(list.ms).toBeLessThan(5_000); // Redis is away 10 s: an answer that waited for it would take that long
  expect(list.headers.get('ratelimit-limit')).not.toBeNull(); // this process's own bucket meanwhile
  expect((await data(mcp, 'list_projects')).total).toBeGreaterThanOrEqual(1);

  // Writes that start work, through REST…
  const b = await api('POST', '/projects', { builder_id: 'manual_list_builder', form_data: { companies: 'One\nTwo\nThree\nFour' } });
  expect(b.status).toBe(201);
  expect(b.ms).toBeLessThan(5_000);
  const rest = await api('POST', `/projects/${projectA}/rows`, { company: { Name: 'Hooli', Domain: null } });
  expect(rest.status).toBeLessThan(300);
  const run = await api('POST', `/projects/${projectA}/columns/run`, { col_ids: [manual.body.col_id] });
  expect(run.status).toBe(200);
  expect(run.ms).toBeLessThan(5_000);

  // …and through MCP.
  const c = await data(mcp, 'run_builder', {
    builder_id: 'manual_list_builder',
    form_data_json: JSON.stringify({ companies: 'Five\nSix' }),
  });
  await data(mcp, 'add_rows', { project_id: projectA, rows_json: JSON.stringify([{ Name: 'Umbrella', Domain: null }]) });
  const mcpRun = await data(mcp, 'run_pending_columns', { project_id: projectA, col_ids_json: JSON.stringify([manual.body.col_id]) });
  expect(mcpRun.queued).toBe(1); // the row added just before, whose Manual cell was pending

  // Operators see the outbox grow while Redis is away.
  const during = await metrics();
  expect(during).toContain('wfs_queue_up 0');
  const depth = Number(/wfs_job_outbox_jobs (\d+)/.exec(during)?.[1]);
  expect(depth).toBeGreaterThanOrEqual(6);

  await back;

  // Everything accepted during the outage runs once Redis is back.
  expect((await built(b.body.project_id)).row_count).toBe(4);
  expect((await built(c.project_id)).row_count).toBe(2);
  const rows = await until('every cell of project A done', async () => {
    const r = await api('GET', `/projects/${projectA}/rows?page_size=100`);
    // Rows added during the outage were enriched by the auto-run column; older rows keep a pending Auto cell.
    const cells = r.body.rows.map((row: any) => row.company);
    const added = cells.filter((row: any) => ['Hooli', 'Umbrella'].includes(row.Name.value));
    const done = [...cells.map((row: any) => row.Manual), ...added.map((row: any) => row.Auto)];
    return r.body.rows.length === 5 && done.every((cell: any) => cell?.status === 'completed') ? r.body : undefined;
  });
  expect(rows.total_rows).toBe(5);
  for (const { company: row } of rows.rows) {
    expect(row.Manual.value).toBe('manual');
    expect(row.Auto.value).toBe(['Hooli', 'Umbrella'].includes(row.Name.value) ? 'auto' : null);
  }
  await until('the outbox empty', async () => ((await service.kernel.storage.outbox.depth()) === 0 ? true : undefined));
  expect(await metrics()).toContain('wfs_job_outbox_jobs 0');

  // Each attempt costs 1 credit: the credits spent count the cells that ran, so none ran twice.
  const credits = await api('GET', '/credits');
  const attempts = credits.body.usage.find((u: { plugin_id: string }) => u.plugin_id === 'attempt_lookup')?.credits;
  const ran = rows.rows.filter((row: any) => row.company.Auto.value === 'auto').length + rows.rows.length;
  expect(attempts).toBe(ran);
}, 90_000);
