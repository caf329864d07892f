import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { DIALECTS } from './support/databases.ts';
import { spawnWorkerOf, startTestService, type TestService } from './support/test-service.ts';
import { until } from './support/until.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/**
 * Deleting a project stops its work on every process: the job running its cells (here a tool that
 * would wait 60 s) and its builder run end at once, and what was queued for it does nothing.
 * Embedded (in-process, and the job thread of `bun run start`) and with a separate worker on
 * MariaDB + Redis, where the deletion reaches the worker as a project event.
 */
const MODES = [
  ...DIALECTS.map((d) => [d, 'as tested'] as const),
  ...(DIALECTS.includes('sqlite') ? [['sqlite', 'job thread'] as const] : []),
];

describe.each(MODES)('deleting a project or a column stops its work on %s (%s)', (dialect, mode) => {
  let t: TestService;
  let worker: Subprocess | undefined;
  beforeAll(async () => {
    const env = { PLUGINS_DIR: FIXTURE_PLUGINS, WORKER_CONCURRENCY: '4' };
    t = await startTestService(dialect, {
      ...env,
      ...(dialect === 'mysql' ? { WORKERS: '0' } : {}),
      ...(mode === 'job thread' ? { JOB_THREAD: '1' } : {}),
    });
    if (dialect === 'mysql') worker = spawnWorkerOf(t, env);
  });
  afterAll(async () => {
    worker?.kill('SIGKILL');
    await t.stop();
  });

  const running = async (pid: string, col: string) => {
    const rows = (await t.api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows ?? [];
    return rows.filter((r: any) => r.company[col]?.status === 'running').length;
  };

  test('a tool call waiting 60 s and a builder run between pages end at once; the queue is empty again', async () => {
    const made = await t.api('POST', '/projects', {
      body: {
        builder_id: 'csv_import_builder',
        form_data: { csv_text: `Name\n${Array.from({ length: 30 }, (_, i) => `R${i}`).join('\n')}` },
      },
    });
    const pid = made.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    const col = await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Slow', tool_id: 'slow_tool', config: { text: '{{Name}}', delay_ms: 60_000 } },
    });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col.body.col_id] } });
    const build = await t.api('POST', '/projects', {
      body: { builder_id: 'slow_builder', form_data: { pages: 100, delay_ms: 2_000, cursor: true } },
    });
    await until(async () => (await running(pid, 'Slow')) > 0, 20_000);
    await until(async () => (await t.api('GET', `/projects/${build.body.project_id}`)).body.builder_status.type === 'running', 20_000);

    expect((await t.api('DELETE', `/projects/${pid}`)).status).toBe(200);
    expect((await t.api('DELETE', `/projects/${build.body.project_id}`)).status).toBe(200);
    // Long before the tool's 60 s and the builder's 200 s, nothing runs or waits any more.
    await until(async () => {
      const s = await t.service.kernel.queue.stats();
      return s.running + s.waiting + s.pending === 0;
    }, 15_000);
  }, 60_000);

  test('deleting a column stops its tool call at once; a column the key or another column reads is a 409', async () => {
    const made = await t.api('POST', '/projects', {
      body: {
        builder_id: 'csv_import_builder',
        form_data: { csv_text: `Name,Domain\n${Array.from({ length: 20 }, (_, i) => `R${i},r${i}.example.com`).join('\n')}` },
      },
    });
    const pid = made.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    const cols = async () => (await t.api('GET', `/projects/${pid}/columns`)).body as { name: string; col_id: string }[];
    const idOf = async (name: string) => (await cols()).find((c) => c.name === name)?.col_id as string;
    // Read by another column, or in the unique key: refused, naming why, and nothing changes.
    await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Domain)' } },
    });
    await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Reads', tool_id: 'slow_tool', config: { text: '{{Name}}', delay_ms: 1 } },
    });
    const read = await t.api('DELETE', `/projects/${pid}/columns/${await idOf('Name')}`);
    expect(read.status).toBe(409);
    expect(read.body.detail.message).toContain('"Reads" reads "Name"');
    await t.api('PUT', `/projects/${pid}/settings`, { body: { unique_columns: ['Domain'] } });
    const keyed = await t.api('DELETE', `/projects/${pid}/columns/${await idOf('Domain')}`);
    expect(keyed.status).toBe(409);
    expect(keyed.body.detail.message).toContain('unique key');
    // A column whose tool waits 60 s: deleted, its job ends now, and the column is gone everywhere.
    const slow = await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Slow', tool_id: 'slow_tool', config: { text: '{{Name}}', delay_ms: 60_000 } },
    });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [slow.body.col_id] } });
    await until(async () => (await running(pid, 'Slow')) > 0, 20_000);
    expect((await t.api('DELETE', `/projects/${pid}/columns/${slow.body.col_id}`)).status).toBe(200);
    await until(async () => {
      const s = await t.service.kernel.queue.stats();
      return s.running + s.waiting + s.pending === 0;
    }, 15_000);
    expect((await cols()).map((c) => c.name)).toEqual(['Name', 'Domain', 'Upper', 'Reads']);
    const rows = (await t.api('GET', `/projects/${pid}/rows?page_size=5`)).body.rows;
    expect(Object.keys(rows[0].company)).not.toContain('Slow');
    expect((await t.api('DELETE', `/projects/${pid}/columns/${slow.body.col_id}`)).status).toBe(404);
    // A column of the same name can be made again.
    expect(
      (await t.api('POST', `/projects/${pid}/columns`, { body: { name: 'Slow', tool_id: 'formula', config: { expression: '1' } } })).status,
    ).toBe(201);
  }, 60_000);
});
