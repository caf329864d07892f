import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DIALECTS } from '../support/databases.ts';
import { call, data, type McpTestService, startMcpTestService } from './mcp-support.ts';

/** Polls get_project through MCP until the builder is done, as the spec's typical flow does. */
async function pollProject(client: Client, projectId: string): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const project = await data(client, 'get_project', { project_id: projectId });
    if (!['queued', 'running'].includes(project.builder_status.type)) return project;
    if (Date.now() > deadline) throw new Error('builder still running');
    await Bun.sleep(25);
  }
}

/** Polls get_project_rows until no cell is loading. */
async function settledRows(client: Client, projectId: string): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await data(client, 'get_project_rows', { project_id: projectId, page_size: 100 });
    if (!page.rows.some((r: any) => Object.values(r.company).some((c: any) => c.is_loading || c.status === 'pending'))) return page.rows;
    if (Date.now() > deadline) throw new Error('cells still loading');
    await Bun.sleep(25);
  }
}

describe.each(DIALECTS)('MCP typical flow on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let projectId: string;
  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = await t.client();
  });
  afterAll(() => t.stop());

  test('list_builders → run_builder → get_project until completed', async () => {
    const builders = await data(client, 'list_builders');
    const manual = builders.find((b: any) => b.builder_id === 'manual_list_builder');
    expect(manual.form_data).toEqual({ companies: '' });
    const created = await data(client, 'run_builder', {
      builder_id: 'manual_list_builder',
      form_data_json: JSON.stringify({ companies: 'Acme\nhttps://www.globex.com/about\nInitech' }),
      name: 'MCP flow',
    });
    projectId = created.project_id;
    const project = await pollProject(client, projectId);
    expect(project.builder_status).toMatchObject({ type: 'completed', error_message: null });
    expect(project.row_count).toBe(3);
    expect(project.columns.map((c: any) => c.name)).toEqual(['Name', 'Domain']);
  });

  test('create_column → run_pending_columns → get_project_rows shows the filled cells', async () => {
    const column = await data(client, 'create_column', {
      project_id: projectId,
      name: 'Shout',
      tool_id: 'formula',
      config_json: JSON.stringify({ expression: '$uppercase(Name)' }),
      auto_run: false,
    });
    expect(column).toMatchObject({ name: 'Shout', type: 'tool', tool_id: 'formula', required: false });
    const domain = await data(client, 'create_column', {
      project_id: projectId,
      name: 'Clean domain',
      tool_id: 'domain_normalizer',
      config_json: '{"value": "{{Domain}}"}',
    });
    expect(await data(client, 'run_pending_columns', { project_id: projectId })).toEqual({ queued: 6 });
    const rows = await settledRows(client, projectId);
    const byName = (n: string | null) => rows.find((r) => r.company.Name.value === n);
    expect(byName('Acme').company.Shout).toEqual({ name: 'Shout', value: 'ACME', status: 'completed', is_loading: false });
    expect(byName(null).company['Clean domain']).toMatchObject({ value: 'globex.com', status: 'completed' });
    expect(byName('Initech').company['Clean domain'].status).toBe('skipped');
    // Only the listed column runs when col_ids_json names it.
    expect(await data(client, 'run_pending_columns', { project_id: projectId, col_ids_json: JSON.stringify([domain.col_id]) })).toEqual({
      queued: 0,
    });
  });

  test('payloads equal the REST payloads of the same operations', async () => {
    for (const [tool, args, path] of [
      ['get_project', { project_id: projectId }, `/projects/${projectId}`],
      ['list_projects', { limit: 10 }, '/projects?limit=10'],
      ['get_project_rows', { project_id: projectId, page: 1, page_size: 2 }, `/projects/${projectId}/rows?page=1&page_size=2`],
      ['list_columns', { project_id: projectId }, `/projects/${projectId}/columns`],
      ['list_tools', {}, '/tools'],
      ['search_tools', { q: 'phone' }, '/tools/search?q=phone'],
      ['list_builders', {}, '/project-builders'],
    ] as const) {
      const rest = await t.api('GET', path);
      expect(rest.status).toBe(200);
      expect(await data(client, tool, args)).toEqual(rest.body);
    }
  });

  test('get_project_rows filters and sorts with filter_groups_json and sort_rules_json', async () => {
    const cols = await data(client, 'list_columns', { project_id: projectId });
    const shout = cols.find((c: any) => c.name === 'Shout').col_id;
    const page = await data(client, 'get_project_rows', {
      project_id: projectId,
      filter_groups_json: JSON.stringify([{ type: 'and', rules: [{ col_id: shout, operator: 'is_not_empty' }] }]),
      sort_rules_json: JSON.stringify([{ col_id: shout, direction: 'desc', sort_as_number: false }]),
    });
    expect(page.rows.map((r: any) => r.company.Shout.value)).toEqual(['INITECH', 'ACME']);
    expect(page.total_rows).toBe(2);
  });

  test('add_rows adds several rows at once; a bad item rejects the whole batch', async () => {
    const ok = await data(client, 'add_rows', {
      project_id: projectId,
      rows_json: JSON.stringify([
        { Name: 'Umbrella', Domain: 'umbrella.example' },
        { Name: 'Hooli', Domain: null },
      ]),
    });
    expect(ok.created).toBe(2);
    expect(ok.row_ids).toHaveLength(2);
    const bad = await call(client, 'add_rows', {
      project_id: projectId,
      rows_json: JSON.stringify([{ Name: 'Fine', Domain: null }, { Name: 'No domain' }]),
    });
    expect(bad).toMatchObject({
      ok: false,
      code: 'validation_error',
      status_code: 403,
      detail: { row_index: 1, missing_columns: ['Domain'] },
    });
    expect((await data(client, 'get_project', { project_id: projectId })).row_count).toBe(5);
  });

  test('set_filters saves filter groups that get_filters returns', async () => {
    const cols = await data(client, 'list_columns', { project_id: projectId });
    const groups = [{ type: 'and', rules: [{ col_id: cols[0].col_id, operator: 'contains', value: 'a' }] }];
    expect(await data(client, 'set_filters', { project_id: projectId, filter_groups_json: JSON.stringify(groups) })).toEqual({
      filter_groups: groups,
    });
    expect(await data(client, 'get_filters', { project_id: projectId })).toEqual({ filter_groups: groups });
  });

  test('get_credits reports balance, plan and API access', async () => {
    const credits = await data(client, 'get_credits');
    expect(credits).toMatchObject({ balance: expect.any(Number), plan: 'pro', api_access: true, usage: expect.any(Array) });
    expect(credits).toEqual((await t.api('GET', '/credits')).body);
  });

  test('a retried run_builder with the same idempotency_key creates one project and charges once', async () => {
    const before = (await data(client, 'get_credits')).balance;
    const args = {
      builder_id: 'google_maps_search',
      form_data_json: JSON.stringify({ query: 'cafes', max_results: 7 }),
      idempotency_key: 'mcp-retry-1',
    };
    const [a, b] = await Promise.all([data(client, 'run_builder', args), data(client, 'run_builder', args)]);
    expect(a.project_id).toBe(b.project_id);
    await pollProject(client, a.project_id);
    const after = await data(client, 'get_credits');
    expect(after.balance).toBe(before - 7);
    expect(after.usage.find((u: any) => u.plugin_id === 'google_maps_search')?.credits).toBeGreaterThanOrEqual(7);
    const other = await call(client, 'run_builder', { ...args, form_data_json: JSON.stringify({ query: 'bars', max_results: 7 }) });
    expect(other).toMatchObject({ ok: false, code: 'validation_error', status_code: 422 });
  });

  test('ICP tools: create, list, get, update, score into a column, delete', async () => {
    const csv = 'Name,Industry,Employees,Country\nAcme,Software,120,France\nGlobex,Retail,5000,USA\nInitech,Software,80,USA\n';
    const built = await data(client, 'run_builder', {
      builder_id: 'csv_import_builder',
      form_data_json: JSON.stringify({ csv_text: csv }),
    });
    await pollProject(client, built.project_id);
    const icp = await data(client, 'create_icp', {
      name: 'EU software',
      definition_json: JSON.stringify({ industries: ['software'], employee_range: { min: 50, max: 500 } }),
    });
    expect(typeof icp.id).toBe('string');
    expect(icp).toMatchObject({ name: 'EU software', definition: { industries: ['software'] } });
    expect((await data(client, 'list_icps')).map((i: any) => i.id)).toContain(icp.id);
    const updated = await data(client, 'update_icp', {
      icp_id: icp.id,
      definition_json: JSON.stringify({ industries: ['software'], employee_range: { min: 50, max: 500 }, locations: ['France'] }),
    });
    expect(updated.definition.locations).toEqual(['France']);
    expect(await data(client, 'get_icp', { icp_id: icp.id })).toEqual(updated);

    const scored = await data(client, 'score_icp', { icp_id: icp.id, project_id: built.project_id, col_name: 'Fit' });
    expect(scored).toMatchObject({
      status: 'completed',
      preview: { scored: 3, partial: false },
      column: { name: 'Fit', type: 'tool', tool_id: 'icp_score' },
    });
    const rows = (await data(client, 'get_project_rows', { project_id: built.project_id })).rows;
    expect(scored.preview.top.map((m: any) => [m.row_id, m.score])).toEqual([
      [rows[0].id, 100],
      [rows[2].id, 75],
      [rows[1].id, 0],
    ]);
    expect(scored.preview.top[0].reasons.map((r: any) => r.criterion)).toEqual(['industries', 'employee_range', 'locations']);
    expect(await data(client, 'get_icp_score_run', { icp_id: icp.id, run_id: scored.run_id })).toMatchObject({
      status: 'completed',
      rows_done: 3,
      scored: 3,
      top: scored.preview.top,
    });
    expect(rows.map((r: any) => [r.company.Name.value, r.company.Fit.value, r.company.Fit.status])).toEqual([
      ['Acme', 100, 'completed'],
      ['Globex', 0, 'completed'],
      // Software and 80 staff meet 25 + 20 of the 60 points; the USA is not France.
      ['Initech', 75, 'completed'],
    ]);
    expect(await data(client, 'delete_icp', { icp_id: icp.id })).toEqual({ deleted: true });
    expect((await call(client, 'get_icp', { icp_id: icp.id })).code).toBe('not_found');
  });

  test('delete_rows and delete_project remove data; the project then answers not_found', async () => {
    const rows = (await data(client, 'get_project_rows', { project_id: projectId })).rows;
    expect(await data(client, 'delete_rows', { project_id: projectId, row_ids_json: JSON.stringify([rows[0].id, '999999']) })).toEqual({
      deleted: 1,
    });
    expect(await data(client, 'delete_project', { project_id: projectId })).toEqual({ deleted: true });
    expect(await call(client, 'get_project', { project_id: projectId })).toMatchObject({ ok: false, code: 'not_found', status_code: 404 });
  });
});
