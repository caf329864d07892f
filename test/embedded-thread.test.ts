import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ThreadQueue } from '../adapters/queue/thread-queue.ts';
import { openSse } from './support/sse.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * The embedded default (`bun run start` on SQLite, no Redis): jobs run on a job thread with its own
 * SQLite connection; the thread that answers requests only enqueues and hears their events.
 */
describe('the job thread of the embedded mode', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService('sqlite', { JOB_THREAD: '1', PLANS_JSON: JSON.stringify({ pro: { requestsPerMinute: null } }) });
  });
  afterAll(() => t.stop());

  const csv = (rows: number, from = 0) =>
    `Name,Domain\n${Array.from({ length: rows }, (_, i) => `Company ${from + i},c${from + i}.example.com`).join('\n')}`;
  const waitDone = async (pid: string) => {
    const w = await t.api('GET', `/projects/${pid}/wait?wait_seconds=50`);
    expect(w.body.ended).toBe(true);
  };

  test('jobs go to the job thread: a builder run and a tool column complete, and the queue figures are its own', async () => {
    expect(t.service.kernel.queue).toBeInstanceOf(ThreadQueue);
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv(30) } } });
    expect(made.status).toBe(201);
    await waitDone(made.body.project_id);
    const col = await t.api('POST', `/projects/${made.body.project_id}/columns`, {
      body: { name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    expect(col.status).toBe(201);
    expect((await t.api('POST', `/projects/${made.body.project_id}/columns/run`, { body: {} })).status).toBe(200);
    await waitDone(made.body.project_id);
    const rows = await t.api('GET', `/projects/${made.body.project_id}/rows?page_size=100&format=values`);
    expect(rows.body.total_rows).toBe(30);
    expect(rows.body.rows.every((r: any) => r.values.Upper === String(r.values.Name).toUpperCase())).toBe(true);
    const stats = await t.service.kernel.queue.stats();
    expect(stats.processed).toBeGreaterThanOrEqual(2);
    expect(stats).toMatchObject({ waiting: 0, running: 0 });
    const metrics = await (await fetch(`${t.url.replace(/\/api\/enterprise$/, '')}/metrics`)).text();
    expect(metrics).toContain('wfs_jobs_processed');
  });

  test('the jobs’ project events reach a watcher on the request thread (SSE)', async () => {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv(5) } } });
    await waitDone(made.body.project_id);
    const stream = await openSse(`${t.url}/projects/${made.body.project_id}/events`, { 'service-api-key': t.key });
    try {
      expect(stream.status).toBe(200);
      await t.api('POST', `/projects/${made.body.project_id}/columns`, {
        body: { name: 'Lower', tool_id: 'formula', config: { expression: '$lowercase(Name)' }, auto_run: true },
      });
      await t.api('POST', `/projects/${made.body.project_id}/columns/run`, { body: {} });
      const written = await stream.waitFor(
        (e) => e.event === 'cells' && (e.data?.cells ?? []).some((c: any) => c.status === 'completed' && c.value === 'company 0'),
        30_000,
      );
      expect(written).toBeDefined();
    } finally {
      stream.close();
    }
  });

  test('writes from both threads at once all land: rows posted during an import, no "database is locked"', async () => {
    const big = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv(20_000) } } });
    const small = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv(1) } } });
    await waitDone(small.body.project_id);
    const posted = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.api('POST', `/projects/${small.body.project_id}/rows`, { body: { company: { Name: `Posted ${i}`, Domain: null } } }),
      ),
    );
    expect(posted.map((r) => r.status)).toEqual(posted.map(() => 201));
    await waitDone(big.body.project_id);
    expect((await t.api('GET', `/projects/${big.body.project_id}`)).body.row_count).toBe(20_000);
    expect((await t.api('GET', `/projects/${small.body.project_id}`)).body.row_count).toBe(41);
  });
});
