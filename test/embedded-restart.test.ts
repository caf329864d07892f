import { expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './support/free-port.ts';

const ROOT = resolve(import.meta.dir, '..');
const KEY = 'restart-test-key';

/** `bun run start` on this SQLite file (embedded: in-process queue), ready when it listens. */
async function start(dir: string, port: number) {
  const proc = Bun.spawn(['bun', 'app/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      DATABASE_URL: `sqlite:${join(dir, 'workflow.sqlite')}`,
      PORT: String(port),
      BOOTSTRAP_API_KEY: KEY,
      PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/plugins'),
      PROVIDER_MODE: 'sandbox',
    },
    stdout: 'pipe',
    stderr: 'ignore',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  const deadline = Date.now() + 20_000;
  while (!out.includes('REST API listening') && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  void (async () => {
    for (;;) if ((await reader.read()).done) break;
  })();
  return { proc, out };
}

test('after a SIGKILL, `bun run start` resumes the builder runs and tool cells the in-process queue lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wfs-restart-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/api/enterprise`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { 'service-api-key': KEY, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as any;
  };
  let first = await start(dir, port);
  try {
    // A column of slow cells, and a builder that writes 10 pages of 10 rows, 300 ms apart.
    const csv = `Name\n${Array.from({ length: 30 }, (_, i) => `name ${i}`).join('\n')}`;
    const listed = await call('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv } });
    for (let i = 0; i < 100 && (await call('GET', `/projects/${listed.project_id}`)).builder_status.type !== 'completed'; i++)
      await Bun.sleep(50);
    await call('POST', `/projects/${listed.project_id}/columns`, {
      name: 'Upper',
      tool_id: 'slow_tool',
      config: { text: '{{Name}}', delay_ms: 400 },
    });
    await call('POST', `/projects/${listed.project_id}/columns/run`, {});
    const built = await call('POST', '/projects', { builder_id: 'slow_builder', form_data: { pages: 10, delay_ms: 300, cursor: true } });
    await Bun.sleep(700);
    const before = await call('GET', `/projects/${built.project_id}`);
    expect(before.builder_status.type).toBe('running');
    first.proc.kill('SIGKILL');
    await first.proc.exited;

    first = await start(dir, port);
    expect(first.out).toContain('resumed work left by a previous run');
    let details: any;
    for (let i = 0; i < 200; i++) {
      details = await call('GET', `/projects/${built.project_id}`);
      if (details.builder_status.type !== 'running' && details.builder_status.type !== 'queued') break;
      await Bun.sleep(100);
    }
    expect(details.builder_status.type).toBe('completed');
    const rows = (await call('GET', `/projects/${built.project_id}/rows?page_size=100`)).rows;
    const names = rows.map((r: any) => r.company.Name.value);
    expect(new Set(names).size).toBe(100); // every row once
    expect(names).toContain('Row 100');

    let cells: any[] = [];
    for (let i = 0; i < 200; i++) {
      cells = (await call('GET', `/projects/${listed.project_id}/rows?page_size=100`)).rows.map((r: any) => r.company.Upper);
      if (cells.every((c) => !c.is_loading)) break;
      await Bun.sleep(100);
    }
    expect(cells).toHaveLength(30);
    expect(cells.every((c) => c.status === 'completed' && /^NAME \d+$/.test(c.value))).toBe(true);
  } finally {
    first.proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
