import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * Re-running only what needs it (docs/enrichment.md): `mode` (pending, failed, empty, all) and `row_ids` on
 * POST /projects/{id}/columns/run and run_pending_columns; bad input runs nothing.
 */
describe.each(DIALECTS)('run modes on %s', (dialect) => {
  let t: TestService;
  let projectId: string;
  let colId: string;
  let rowIds: string[];

  const settle = () => t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`);
  const statuses = async () => {
    const rows = await t.api('GET', `/projects/${projectId}/rows?page_size=10`);
    return Object.fromEntries(rows.body.rows.map((r: any) => [r.company.Name.value, r.company.Double.status]));
  };
  const run = (body: Record<string, unknown>) =>
    t.api('POST', `/projects/${projectId}/columns/run`, { body: { col_ids: [colId], ...body } });

  beforeAll(async () => {
    t = await startTestService(dialect, { MCP_PORT: '0' });
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: '1\n2\nabc\n4' }, name: 'Modes' },
    });
    projectId = made.body.project_id;
    await settle();
    const col = await t.api('POST', `/projects/${projectId}/columns`, {
      body: { name: 'Double', tool_id: 'formula', config: { expression: '$number(Name) * 2' } },
    });
    colId = col.body.col_id;
    rowIds = (await t.api('GET', `/projects/${projectId}/rows?page_size=10`)).body.rows.map((r: any) => r.id);
  });
  afterAll(() => t.stop());

  test('pending (the default) runs every cell never run; failed then re-runs only the one in error', async () => {
    expect((await run({})).body).toEqual({ queued: 4 });
    await settle();
    expect(await statuses()).toEqual({ 1: 'completed', 2: 'completed', abc: 'error', 4: 'completed' });
    expect((await run({})).body).toEqual({ queued: 0 });
    expect((await run({ mode: 'failed' })).body).toEqual({ queued: 1 });
    await settle();
    expect((await run({ mode: 'empty' })).body).toEqual({ queued: 1 });
    await settle();
  });

  test('all with row_ids re-runs just those rows, completed cells included', async () => {
    expect((await run({ mode: 'all', row_ids: [rowIds[0], rowIds[1]] })).body).toEqual({ queued: 2 });
    await settle();
    expect(await statuses()).toEqual({ 1: 'completed', 2: 'completed', abc: 'error', 4: 'completed' });
    expect((await run({ mode: 'all' })).body).toEqual({ queued: 4 });
    await settle();
  });

  test('bad input runs nothing: an unknown mode is 422, a row that is not in the project 404', async () => {
    const badMode = await run({ mode: 'everything' });
    expect(badMode.status).toBe(422);
    expect(JSON.stringify(badMode.body.detail)).toContain('mode');
    // A row id this project does not have names no row of it.
    const foreignRow = '99999';
    const missing = await run({ mode: 'all', row_ids: [rowIds[0], foreignRow] });
    expect(missing.status).toBe(404);
    expect(missing.body.detail.missing_row_ids).toEqual([foreignRow]);
    const notAnId = await run({ mode: 'all', row_ids: ['1e3'] });
    expect(notAnId.status).toBe(404);
    // A row of another project of the same workspace (row ids are unique across projects) is not this project's.
    const other = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'Elsewhere' } } });
    await t.api('GET', `/projects/${other.body.project_id}/wait?wait_seconds=20`);
    const elsewhere = (await t.api('GET', `/projects/${other.body.project_id}/rows`)).body.rows[0].id;
    const foreign = await run({ mode: 'all', row_ids: [elsewhere] });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail.missing_row_ids).toEqual([elsewhere]);
    const estimate = await t.api('POST', `/projects/${projectId}/columns/estimate`, { body: { row_ids: [elsewhere] } });
    expect(estimate.status).toBe(404);
    // Nothing was queued by the refused calls.
    const rows = await t.api('GET', `/projects/${projectId}/rows?page_size=10`);
    expect(rows.body.rows.every((r: any) => !r.company.Double.is_loading)).toBe(true);
  });

  test('MCP run_pending_columns takes the same mode and row_ids_json', async () => {
    const client = await connect(t.service.mcpUrl as string, { 'service-api-key': t.key });
    try {
      const failed = await call(client, 'run_pending_columns', { project_id: projectId, mode: 'failed', wait_seconds: 20 });
      expect(failed).toMatchObject({ ok: true, data: { queued: 1 }, wait: { ended: true } });
      const some = await call(client, 'run_pending_columns', {
        project_id: projectId,
        mode: 'all',
        row_ids_json: JSON.stringify([rowIds[3]]),
      });
      expect(some.data).toEqual({ queued: 1 });
      const bad = await call(client, 'run_pending_columns', { project_id: projectId, mode: 'nope' });
      expect(bad).toMatchObject({ ok: false, code: 'validation_error', status_code: 422 });
    } finally {
      await client.close();
    }
  });
});
