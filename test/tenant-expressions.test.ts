import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { addColumn, cellOf, csvProject, SERVICE_START_MS, settledRows } from './plugins/enrich-helpers.ts';
import { DIALECTS, freshDatabaseUrl, queueEnv } from './support/databases.ts';
import { freePort } from './support/free-port.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const ROOT = resolve(import.meta.dir, '..');
const ENDLESS = '($f := function($x){ $f($x + 1) }; $f(0))';
const HUGE_RANGES = '$count([1..10000000, 1..10000000, 1..10000000, 1..10000000])';
const BIG_MAP = '$count([1..1000000].($ * 2))';

/** Lists the project's rows every 50 ms until `done` settles; answers the slowest listing in ms. */
async function slowestListingWhile(t: TestService, pid: string, done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  let slowest = 0;
  while (!finished) {
    const t0 = performance.now();
    const r = await t.api('GET', `/projects/${pid}/rows?page_size=10`);
    slowest = Math.max(slowest, performance.now() - t0);
    expect(r.status).toBe(200);
    await Bun.sleep(50);
  }
  return slowest;
}

describe.each(DIALECTS)('tenant expressions cannot stop the service, on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('endless and huge formulas end their cells in error; listings answer meanwhile; the next job runs', async () => {
    const pid = await csvProject(t, 'Name\nAcme\nGlobex\nInitech');
    const endless = await addColumn(t, pid, 'Endless', 'formula', { expression: ENDLESS });
    const ranges = await addColumn(t, pid, 'Ranges', 'formula', { expression: HUGE_RANGES });
    const mapped = await addColumn(t, pid, 'Mapped', 'formula', { expression: BIG_MAP });
    const t0 = performance.now();
    const run = t
      .api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [endless, ranges, mapped] } })
      .then(() => settledRows(t, pid, 30_000));
    const slowest = await slowestListingWhile(t, pid, run);
    const rows = await run;
    const seconds = (performance.now() - t0) / 1000;
    for (const name of ['Acme', 'Globex', 'Initech']) {
      expect(cellOf(rows, 'Name', name, 'Endless')).toMatchObject({ status: 'error', value: null, error: 'expression ran over 1 s' });
      expect(cellOf(rows, 'Name', name, 'Ranges')).toMatchObject({
        status: 'error',
        error: 'expression built a sequence of more than 100,000 items',
      });
      expect(cellOf(rows, 'Name', name, 'Mapped')).toMatchObject({
        status: 'error',
        error: 'expression built a sequence of more than 100,000 items',
      });
    }
    expect(seconds).toBeLessThan(40); // a hang, not a slow machine (10× the few seconds the bounds take)
    // An evaluation on the thread that answers requests would hold it for its whole second.
    expect(slowest).toBeLessThan(800);

    // The workers go on: a plain formula added afterwards fills normally.
    const upper = await addColumn(t, pid, 'Upper', 'formula', { expression: '$uppercase(Name)' });
    const after = await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [upper] } });
    expect(after.status).toBe(200);
    const done = await settledRows(t, pid);
    expect(cellOf(done, 'Name', 'Globex', 'Upper')).toMatchObject({ status: 'completed', value: 'GLOBEX' });
  }, 60_000);

  test('a hostile regex on 20 rows: 20 errors with its reason where the engine gives up, 20 exact answers where RE2 runs it', async () => {
    const hostile = `${'a'.repeat(34)}!`;
    const pid = await csvProject(t, `Name\n${Array.from({ length: 20 }, () => hostile).join('\n')}`);
    const backref = await addColumn(t, pid, 'Backref', 'formula', { expression: '$contains(Name, /^(a+)+b\\1$/)' });
    const nested = await addColumn(t, pid, 'Nested', 'formula', { expression: '$contains(Name, /^(a+)+$/)' });
    expect((await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [backref, nested] } })).status).toBe(200);
    const rows = await settledRows(t, pid, 60_000);
    expect(rows).toHaveLength(20);
    for (const row of rows) {
      expect(row.company.Backref.status).toBe('error');
      expect(row.company.Backref.value).toBeNull();
      // The engine gives up after half a second here; on a busy machine the 1 s bound may come first. Either way an error.
      expect(row.company.Backref.error).toMatch(/backtracked past the engine|expression ran over 1 s/);
      expect(row.company.Nested).toMatchObject({ status: 'completed', value: false });
    }
  }, 90_000);

  test('an endless run condition skips its cells with the reason, without running the tool', async () => {
    const pid = await csvProject(t, 'Name\nAcme\nGlobex');
    const r = await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Guarded', tool_id: 'formula', config: { expression: 'Name' }, run_condition: ENDLESS },
    });
    expect(r.status).toBe(201);
    const run = await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [r.body.col_id] } });
    expect(run.status).toBe(200);
    const rows = await settledRows(t, pid, 20_000);
    expect(cellOf(rows, 'Name', 'Acme', 'Guarded')).toMatchObject({
      status: 'skipped',
      value: null,
      error: 'run condition failed: expression ran over 1 s',
    });
  }, 60_000);

  test('an http_api extract that never ends fails its row, not the worker', async () => {
    const pid = await csvProject(t, 'Name\nAcme');
    // Sandbox mode: the request is not sent; the extract runs over the echo of the request.
    const col = await addColumn(t, pid, 'Api', 'http_api', { url: 'https://api.example.com/x', extract: ENDLESS });
    expect((await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col] } })).status).toBe(200);
    const rows = await settledRows(t, pid, 20_000);
    expect(cellOf(rows, 'Name', 'Acme', 'Api')).toMatchObject({ status: 'error', error: 'extract failed: expression ran over 1 s' });
  }, 60_000);
});

/** Starts a real process and answers when its output contains `ready`. */
async function spawnUntil(cmd: string[], env: Record<string, string>, ready: string) {
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  const deadline = Date.now() + 20_000;
  while (!out.includes(ready) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  if (!out.includes(ready)) throw new Error(`${cmd.join(' ')} did not print "${ready}": ${out}`);
  // Keep draining so the process never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read()).done) break;
  })();
  return proc;
}

describe.each(DIALECTS)('SIGTERM stops a process busy with an endless formula, on %s', (dialect) => {
  test(dialect === 'sqlite' ? '`bun run start` (in-process workers) exits 0' : '`bun run worker` (Redis Streams) exits 0', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'wfs-sigterm-'));
    const port = await freePort();
    const env = {
      DATABASE_URL: await freshDatabaseUrl(dialect),
      ...(await queueEnv(dialect)),
      PORT: String(port),
      BOOTSTRAP_API_KEY: 'sigterm-test-key',
      PROVIDER_MODE: 'sandbox',
      JOB_SHUTDOWN_GRACE_MS: '1000',
      LOG_LEVEL: 'info',
      // The separate worker is the one to stop on MariaDB: the API runs no jobs.
      ...(dialect === 'sqlite' ? {} : { WORKERS: '0' }),
    };
    const api = await spawnUntil(['bun', 'app/main.ts'], env, 'REST API listening');
    const worker = dialect === 'sqlite' ? api : await spawnUntil(['bun', 'app/worker.ts'], env, 'worker started');
    try {
      const base = `http://127.0.0.1:${port}/api/enterprise`;
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(base + path, {
          method,
          headers: { 'service-api-key': 'sigterm-test-key', 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const csv = `Name\n${Array.from({ length: 40 }, (_, i) => `Row ${i}`).join('\n')}`;
      const { body: created } = await call('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv } });
      for (let i = 0; i < 200 && (await call('GET', `/projects/${created.project_id}`)).body.builder_status.type !== 'completed'; i++)
        await Bun.sleep(50);
      const col = await call('POST', `/projects/${created.project_id}/columns`, {
        name: 'Endless',
        tool_id: 'formula',
        config: { expression: ENDLESS },
      });
      expect(col.status).toBe(201);
      await call('POST', `/projects/${created.project_id}/columns/run`, {});
      // Wait until the formula is being evaluated, then ask the process to stop.
      let busy = false;
      for (let i = 0; i < 200 && !busy; i++) {
        const rows = await call('GET', `/projects/${created.project_id}/rows?page_size=100`);
        busy = rows.body.rows.some((r: any) => r.company.Endless.status === 'running');
        if (!busy) await Bun.sleep(50);
      }
      expect(busy).toBe(true);
      const t0 = performance.now();
      worker.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      expect(performance.now() - t0).toBeLessThan(15_000); // a hang, not a slow machine (10× the one-second grace)
    } finally {
      api.kill('SIGKILL');
      worker.kill('SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);
});
