import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import type { SqlStorage } from '../adapters/storage/sql-storage.ts';
import { loadConfig } from '../core/config.ts';
import { issueApiKey } from '../core/identity/api-keys.ts';
import { type RunningService, startService } from '../app/service.ts';
import { freshDatabaseUrl, queueEnv } from './support/databases.ts';

/**
 * Worker processes on MariaDB + Redis, as in production: crashes (SIGKILL) in the middle of a
 * builder run and of an enrichment batch, two workers on one stream, graceful shutdown, dead letters.
 */
const ROOT = resolve(import.meta.dir, '..');
const FIXTURES = resolve(import.meta.dir, 'fixtures/plugins');

let env: Record<string, string>;
let api: RunningService;
let key: string;
let workspaceId: string;
const workers: Subprocess[] = [];

function spawnWorker(): Subprocess {
  const proc = Bun.spawn(['bun', 'app/worker.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'ignore', stderr: 'ignore' });
  workers.push(proc);
  return proc;
}

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(api.restUrl + path, {
    method,
    headers: { 'service-api-key': key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return res.json();
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

async function allRows(projectId: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const r = await call('GET', `/projects/${projectId}/rows?page=${page}&page_size=100`);
    out.push(...r.rows);
    if (page >= r.total_pages) return out;
  }
}

beforeAll(async () => {
  env = {
    ...(await queueEnv('mysql')),
    DATABASE_URL: await freshDatabaseUrl('mysql'),
    PLUGINS_DIR: FIXTURES,
    PROVIDER_MODE: 'sandbox',
    JOB_VISIBILITY_TIMEOUT_MS: '1000',
    JOB_BACKOFF_MS: '50',
    // Two jobs at a time per worker: with two workers on the stream, neither can take all the work.
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'silent',
  };
  api = await startService(loadConfig({ ...env, PORT: '0', WORKERS: '0' }));
  const ws = await api.kernel.storage.workspaces.create({ name: 'workers', plan: 'pro' });
  workspaceId = ws.id;
  key = (await issueApiKey(api.kernel.storage.workspaces, ws.id)).api_key;
  await api.kernel.storage.credits.grant(ws.id, 1_000_000);
});

afterAll(async () => {
  for (const w of workers) w.kill('SIGKILL');
  await api.stop();
});

describe.each([false, true])('a worker killed in the middle of a builder run (plugin cursor: %p)', (cursor) => {
  test('a new worker finishes it with every row exactly once', async () => {
    for (const w of workers) w.kill('SIGKILL');
    const before = await api.kernel.storage.credits.balance(workspaceId);
    const { project_id } = await call('POST', '/projects', { builder_id: 'slow_builder', form_data: { pages: 30, delay_ms: 40, cursor } });
    const first = spawnWorker();
    await until('some rows', async () => (await call('GET', `/projects/${project_id}`)).row_count >= 50);
    first.kill('SIGKILL');
    await first.exited;
    const killedAt = (await call('GET', `/projects/${project_id}`)).row_count;
    expect(killedAt).toBeLessThan(300);
    spawnWorker();
    const done = await until('the run to end', async () => {
      const p = await call('GET', `/projects/${project_id}`);
      return ['completed', 'failed'].includes(p.builder_status.type) && p;
    });
    expect(done.builder_status.type).toBe('completed');
    expect(done.row_count).toBe(300);
    const names = (await allRows(project_id)).map((r) => r.company.Name.value);
    expect(new Set(names).size).toBe(300);
    expect(names).toEqual(Array.from({ length: 300 }, (_, i) => `Row ${i + 1}`));
    expect(done.lead_gen_execution_log.some((e: any) => e.step === 'resumed')).toBe(true);
    expect(await api.kernel.storage.credits.balance(workspaceId)).toBe(before - 300);
  });
});

test('a worker killed in the middle of an uploaded CSV import: a new worker goes on, every record exactly once', async () => {
  for (const w of workers) w.kill('SIGKILL');
  const n = 100_000;
  const csv = `Name,City,Employees\n${Array.from({ length: n }, (_, i) => `Company ${i + 1},Lyon,${i}`).join('\n')}\n`;
  const res = await fetch(`${api.restUrl}/projects/import.csv?name=Big`, {
    method: 'POST',
    headers: { 'service-api-key': key, 'content-type': 'text/csv' },
    body: csv,
  });
  expect(res.status).toBe(201);
  const { project_id } = (await res.json()) as { project_id: string };
  const first = spawnWorker();
  await until('a few pages', async () => (await call('GET', `/projects/${project_id}`)).row_count >= 10_000, 60_000);
  first.kill('SIGKILL');
  await first.exited;
  expect((await call('GET', `/projects/${project_id}`)).row_count).toBeLessThan(n);
  spawnWorker();
  const done = await until(
    'the import to end',
    async () => {
      const p = await call('GET', `/projects/${project_id}`);
      return ['completed', 'failed'].includes(p.builder_status.type) && p;
    },
    120_000,
  );
  expect(done.builder_status.type).toBe('completed');
  expect(done.row_count).toBe(n);
  expect(done.lead_gen_execution_log.some((e: any) => e.step === 'resumed')).toBe(true);
  const text = await (
    await fetch(`${api.restUrl}/projects/${project_id}/export.csv?columns=%5B%22Name%22%5D`, { headers: { 'service-api-key': key } })
  ).text();
  const names = text.trim().split('\r\n').slice(1);
  expect(names).toEqual(Array.from({ length: n }, (_, i) => `Company ${i + 1}`));
  // The file went with the end of its import.
  const left = await (api.kernel.storage as SqlStorage).database.db
    .selectFrom('uploads')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .execute();
  expect(left).toEqual([]);
}, 240_000);

async function csvProject(n: number): Promise<string> {
  const csv = `Name\n${Array.from({ length: n }, (_, i) => `name ${i + 1}`).join('\n')}\n`;
  const { project_id } = await call('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv } });
  await until('the import', async () => (await call('GET', `/projects/${project_id}`)).builder_status.type === 'completed');
  return project_id;
}

async function settled(projectId: string, column: string): Promise<any[]> {
  return until(
    `${column} to settle`,
    async () => {
      const rows = await allRows(projectId);
      return rows.every((r) => !['pending', 'queued', 'running'].includes(r.company[column].status)) && rows;
    },
    60_000,
  );
}

async function chargesOf(columnId: string): Promise<number> {
  const entries = await api.kernel.storage.credits.entries(workspaceId, 100_000);
  return entries.filter((e) => e.columnId === columnId && e.kind === 'charge').length;
}

test('a worker killed in the middle of an enrichment batch: every cell filled once, charged once', async () => {
  spawnWorker();
  const pid = await csvProject(200);
  const col = await call('POST', `/projects/${pid}/columns`, {
    name: 'Upper',
    tool_id: 'slow_tool',
    config: { text: '{{Name}}', delay_ms: 150 },
  });
  await call('POST', `/projects/${pid}/columns/run`, {});
  await until('a few cells', async () => (await allRows(pid)).filter((r) => r.company.Upper.status === 'completed').length >= 20);
  for (const w of workers) w.kill('SIGKILL');
  spawnWorker();
  const rows = await settled(pid, 'Upper');
  for (const r of rows) expect(r.company.Upper).toMatchObject({ status: 'completed', value: r.company.Name.value.toUpperCase() });
  expect(await chargesOf(col.col_id)).toBe(200);
});

test('two workers on one stream share the work, and each cell is done once', async () => {
  for (const w of workers) w.kill('SIGKILL');
  const a = spawnWorker();
  const b = spawnWorker();
  const pid = await csvProject(600);
  const col = await call('POST', `/projects/${pid}/columns`, {
    name: 'Upper',
    tool_id: 'slow_tool',
    config: { text: '{{Name}}', delay_ms: 30 },
  });
  await call('POST', `/projects/${pid}/columns/run`, {});
  await settled(pid, 'Upper');
  expect(await chargesOf(col.col_id)).toBe(600);
  // Each worker publishes its counters; both did part of the work.
  const board = await until(
    'both workers to report work',
    async () => {
      const all = await api.kernel.statsBoard.all();
      return all.filter((s) => s.processed > 0).length >= 2 && all;
    },
    15_000,
  );
  expect(board.filter((s) => s.processed > 0).length).toBeGreaterThanOrEqual(2);
  const metrics = await (await fetch(`${api.restUrl?.replace(/\/api\/enterprise$/, '')}/metrics`)).text();
  expect(metrics).toContain('wfs_queue_waiting_jobs');
  expect(metrics.match(/wfs_jobs_processed_total\{worker="[^"]+"\} [1-9]/g)?.length).toBeGreaterThanOrEqual(2);
  a.kill('SIGKILL');
  b.kill('SIGKILL');
});

test('SIGTERM: the worker stops taking jobs, finishes the running one and exits 0', async () => {
  for (const w of workers) w.kill('SIGKILL');
  const { project_id } = await call('POST', '/projects', {
    builder_id: 'slow_builder',
    form_data: { pages: 20, delay_ms: 30, cursor: true },
  });
  const w = spawnWorker();
  await until('the run to start', async () => (await call('GET', `/projects/${project_id}`)).row_count > 0);
  w.kill('SIGTERM');
  expect(await w.exited).toBe(0);
  const p = await call('GET', `/projects/${project_id}`);
  expect(p.builder_status.type).toBe('completed');
  expect(p.row_count).toBe(200);
});

test('a job whose payload does not fit goes to the dead letter; the admin CLI lists and re-drives it', async () => {
  spawnWorker();
  const id = await api.kernel.queue.enqueue('builder.run', { project_pk: 'not a number' });
  const dead = await until('the dead letter', async () => (await api.kernel.queue.listDead(10)).find((d) => d.id === id));
  expect(dead.reason).toBe('invalid_payload');
  const admin = async (...args: string[]) => {
    const proc = Bun.spawn(['bun', 'run', 'admin', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe' });
    return JSON.parse(await new Response(proc.stdout).text());
  };
  const listed = await admin('jobs:dead');
  expect(listed.dead.map((d: any) => [d.id, d.reason])).toContainEqual([id, 'invalid_payload']);
  expect(listed.dead.find((d: any) => d.id === id).error).toContain('project_pk');
  expect(await admin('jobs:retry', '--id', id)).toEqual({ retried: 1 });
  const stats = await admin('jobs:stats');
  expect(stats).toMatchObject({ waiting: expect.any(Number), pending: expect.any(Number), dead: expect.any(Number) });
  expect(stats.workers.length).toBeGreaterThanOrEqual(1);
});
