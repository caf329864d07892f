import { afterAll, beforeAll, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { loadConfig } from '../core/config.ts';
import { issueApiKey } from '../core/identity/api-keys.ts';
import { type RunningService, startService } from '../app/service.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { queueEnv } from './support/databases.ts';
import { createDatabase, type MariaDbServer, startMariaDb } from './support/mariadb.ts';

/** The database going away mid-run: the API answers 503 at once, the run waits and resumes. */
let db: MariaDbServer;
let service: RunningService;
let key: string;

beforeAll(async () => {
  db = await startMariaDb({ bufferPoolMb: 128 });
  service = await startService(
    loadConfig({
      ...(await queueEnv('mysql')),
      DATABASE_URL: await createDatabase(db.url, 'outage'),
      PORT: '0',
      MCP_PORT: '0',
      PROVIDER_MODE: 'sandbox',
      PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/plugins'),
      JOB_BACKOFF_MS: '200',
      JOB_MAX_ATTEMPTS: '30',
    }),
  );
  const ws = await service.kernel.storage.workspaces.create({ name: 'outage', plan: 'pro' });
  key = (await issueApiKey(service.kernel.storage.workspaces, ws.id)).api_key;
  await service.kernel.storage.credits.grant(ws.id, 10_000);
});

afterAll(async () => {
  await service.stop();
  await db.stop();
});

const get = (path: string) => fetch(service.restUrl + path, { headers: { 'service-api-key': key } });

test('while MariaDB is down the API answers 503 quickly; a builder run in flight resumes and completes', async () => {
  const res = await fetch(`${service.restUrl}/projects`, {
    method: 'POST',
    headers: { 'service-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ builder_id: 'slow_builder', form_data: { pages: 40, delay_ms: 50, cursor: true } }),
  });
  const { project_id } = await res.json();
  for (;;) {
    const p = await (await get(`/projects/${project_id}`)).json();
    if (p.row_count >= 50) break;
    await Bun.sleep(20);
  }
  const restarting = db.restart(10_000); // the issue: the database away for 10 seconds mid-run
  await Bun.sleep(500);
  const started = performance.now();
  const during = await get('/projects');
  expect(during.status).toBe(503);
  expect(during.headers.get('retry-after')).toBe('5');
  expect((await during.json()).detail).toContain('database is unreachable');
  expect(performance.now() - started).toBeLessThan(5_000);
  await restarting;
  let done: any;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const r = await get(`/projects/${project_id}`);
    if (r.status === 200) {
      done = await r.json();
      if (done.builder_status.type !== 'running' && done.builder_status.type !== 'queued') break;
    }
    await Bun.sleep(100);
  }
  expect(done.builder_status.type).toBe('completed');
  expect(done.row_count).toBe(400);
  const rows = await (await get(`/projects/${project_id}/rows?page=4&page_size=100`)).json();
  expect(rows.rows.at(-1).company.Name.value).toBe('Row 400');
});

test('the database stopped for 5 s: every request meanwhile is answered within 2 s (REST 503 + Retry-After, MCP unavailable), full service within 5 s of its return', async () => {
  const mcp = await connect(service.mcpUrl as string, { 'service-api-key': key });
  try {
    expect((await get('/projects')).status).toBe(200);
    let back = false;
    const restarting = db.restart(5_000).then(() => {
      back = true;
    });
    const slowest = { rest: 0, mcp: 0 };
    let sawRest503 = false;
    let sawMcpUnavailable = false;
    while (!back) {
      let t = performance.now();
      const r = await get('/projects');
      slowest.rest = Math.max(slowest.rest, performance.now() - t);
      if (r.status !== 200) {
        expect(r.status).toBe(503);
        expect(r.headers.get('retry-after')).toBe('5');
        expect((await r.json()).detail).toContain('database is unreachable');
        sawRest503 = true;
      } else await r.body?.cancel();
      t = performance.now();
      const envelope = await call(mcp, 'list_projects');
      slowest.mcp = Math.max(slowest.mcp, performance.now() - t);
      if (!envelope.ok) {
        expect(envelope).toMatchObject({ code: 'unavailable', status_code: 503 });
        sawMcpUnavailable = true;
      }
      await Bun.sleep(100);
    }
    await restarting;
    expect(sawRest503).toBe(true);
    expect(sawMcpUnavailable).toBe(true);
    // The database is away 10 s: an answer that waited for it would take that long.
    expect(slowest.rest).toBeLessThan(5_000);
    expect(slowest.mcp).toBeLessThan(5_000);
    // Back: both doors serve again within 5 s of the database accepting connections.
    const returned = performance.now();
    for (;;) {
      const rest = await get('/projects');
      const viaMcp = await call(mcp, 'list_projects');
      if (rest.status === 200 && viaMcp.ok) break;
      expect(performance.now() - returned).toBeLessThan(30_000); // a hang, not a slow reconnection
      await Bun.sleep(100);
    }
  } finally {
    await mcp.close();
  }
}, 60_000);
