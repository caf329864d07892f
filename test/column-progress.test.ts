import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

const ZERO = { pending: 0, queued: 0, running: 0, completed: 0, no_result: 0, error: 0, failed: 0, skipped: 0, insufficient_credits: 0 };

/** GET /projects/{id}/columns/progress (get_column_progress): each tool column's cells by status. */
describe.each(DIALECTS)('column progress on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  });
  afterAll(() => t.stop());

  async function project() {
    const csv = 'Name,Website\nAcme,acme.com\nGlobex,\nInitech,initech.com\nHooli,hooli.com\n';
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    const id = made.body.project_id as string;
    await waitForBuilder(t, id);
    const progress = async () => {
      const r = await t.api('GET', `/projects/${id}/columns/progress`);
      expect(r.status).toBe(200);
      return r.body;
    };
    const add = async (body: Record<string, unknown>) => (await t.api('POST', `/projects/${id}/columns`, { body })).body.col_id as string;
    const run = async (colId: string) => {
      await t.api('POST', `/projects/${id}/columns/run`, { body: { col_ids: [colId] } });
      await t.api('GET', `/projects/${id}/wait?wait_seconds=20`);
    };
    return { id, progress, add, run };
  }

  test('counts each tool column’s cells by status over the live rows; input columns are not listed', async () => {
    const p = await project();
    expect(await p.progress()).toEqual({ columns: [] });
    const domain = await p.add({ name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } });
    const broken = await p.add({
      name: 'Broken',
      tool_id: 'formula',
      config: { expression: '$number("x")' },
      run_condition: 'Name != "Hooli"',
    });
    const idle = await p.add({ name: 'Idle', tool_id: 'formula', config: { expression: '1' } });
    expect(await p.progress()).toEqual({
      columns: [domain, broken, idle].map((col_id) => ({ col_id, total: 4, ...ZERO, pending: 4 })),
    });
    await p.run(domain);
    await p.run(broken);
    expect(await p.progress()).toEqual({
      columns: [
        { col_id: domain, total: 4, ...ZERO, completed: 3, skipped: 1 },
        { col_id: broken, total: 4, ...ZERO, error: 3, failed: 3, skipped: 1 },
        { col_id: idle, total: 4, ...ZERO, pending: 4 },
      ],
    });
    // A deleted row leaves every count.
    const rows = (await t.api('GET', `/projects/${p.id}/rows`)).body.rows;
    await t.api('DELETE', `/projects/${p.id}/rows`, { body: { row_ids: [rows[1].id] } });
    const after = await p.progress();
    expect(after.columns[0]).toEqual({ col_id: domain, total: 3, ...ZERO, completed: 3 });
    expect(after.columns[2]).toEqual({ col_id: idle, total: 3, ...ZERO, pending: 3 });
  });

  test('asked again while nothing changed, it counts nothing; a write or a new column counts again', async () => {
    const p = await project();
    const domain = await p.add({ name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } });
    const rows = t.service.kernel.storage.rows;
    const count = rows.statusCounts;
    let counted = 0;
    rows.statusCounts = (...args) => {
      counted++;
      return count.apply(rows, args);
    };
    try {
      const first = await p.progress();
      expect(await p.progress()).toEqual(first);
      expect(await p.progress()).toEqual(first);
      expect(counted).toBe(1);
      await p.run(domain);
      expect((await p.progress()).columns[0]).toMatchObject({ completed: 3, skipped: 1 });
      expect(counted).toBe(2);
      const idle = await p.add({ name: 'Idle', tool_id: 'formula', config: { expression: '1' } });
      expect((await p.progress()).columns.map((c: any) => [c.col_id, c.pending])).toEqual([
        [domain, 0],
        [idle, 4],
      ]);
      expect(counted).toBe(3);
    } finally {
      rows.statusCounts = count;
    }
  });

  test('another workspace’s project is 404', async () => {
    const p = await project();
    const stranger = await t.newWorkspace();
    const r = await t.api('GET', `/projects/${p.id}/columns/progress`, { headers: { 'service-api-key': stranger.key } });
    expect(r.status).toBe(404);
  });
});
