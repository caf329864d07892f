import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { operations } from '../core/operations/index.ts';
import type { AnyOperation } from '../core/operations/operation.ts';
import { data, type McpTestService, startMcpTestService } from './mcp/mcp-support.ts';
import { closedSchemaErrors } from './support/closed-schema.ts';
import { DIALECTS } from './support/databases.ts';
import { enc } from './support/test-service.ts';
import { setEnv } from './plugins/enrich-helpers.ts';
import { recordEvent } from '../core/webhooks/events.ts';

/**
 * Response schemas are the truth (docs/architecture.md): a typical flow calls every operation through
 * both doors, and each answer — the REST JSON and the MCP structuredContent.data — must fit its
 * operation's response schema with every object closed (no field the schema does not describe).
 */
const byName = new Map(operations.map((op) => [op.name, op]));

function operation(name: string): AnyOperation {
  const op = byName.get(name);
  if (!op) throw new Error(`no operation ${name}`);
  return op;
}

describe.each(DIALECTS)('every operation answers what its response schema says, on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  const exercised = { rest: new Set<string>(), mcp: new Set<string>() };

  /** Calls an operation over REST (method from the table), expects its success status, checks the answer. */
  async function rest(name: string, path: string, body?: unknown): Promise<any> {
    const op = operation(name);
    const r = await t.api(op.method, path, body === undefined ? {} : { body });
    if (r.status !== (op.successStatus ?? 200)) throw new Error(`${op.method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    expect({ door: 'REST', name, errors: closedSchemaErrors(op.response, r.body) }).toEqual({ door: 'REST', name, errors: [] });
    exercised.rest.add(name);
    return r.body;
  }

  /** Calls the same operation as an MCP tool; checks structuredContent.data against the same schema. */
  async function mcp(name: string, args: Record<string, unknown> = {}): Promise<any> {
    const answer = await data(client, name, args);
    expect({ door: 'MCP', name, errors: closedSchemaErrors(operation(name).response, answer) }).toEqual({ door: 'MCP', name, errors: [] });
    exercised.mcp.add(name);
    return answer;
  }

  async function settled(projectId: string): Promise<any[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const page = await rest('get_project_rows', `/projects/${projectId}/rows?page_size=100`);
      const busy = page.rows.some((r: any) => Object.values(r.company).some((c: any) => c.is_loading || c.status === 'pending'));
      if (!busy) return page.rows;
      if (Date.now() > deadline) throw new Error('cells still loading');
      await Bun.sleep(25);
    }
  }

  async function built(projectId: string): Promise<any> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const p = await rest('get_project', `/projects/${projectId}`);
      if (!['queued', 'running'].includes(p.builder_status.type)) return p;
      if (Date.now() > deadline) throw new Error('builder still running');
      await Bun.sleep(25);
    }
  }

  const csv =
    'Name,Industry,Employees,Country,Nick\nAcme,software,120,France,ACM\nGlobex,retail,40000,Germany,\nInitech,software,60,France,INI\n';
  let projectId: string;
  let mcpProjectId: string;
  let columns: any[];

  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = await t.client();
  });
  afterAll(() => t.stop());

  test('catalogs: builders, tools, tool search, credits', async () => {
    await rest('list_builders', '/project-builders');
    await mcp('list_builders');
    await rest('list_tools', '/tools');
    await mcp('list_tools');
    await rest('search_tools', '/tools/search?q=email');
    await mcp('search_tools', { q: 'phone' });
    await rest('get_tool_stats', '/tools/domain_normalizer/stats');
    await mcp('get_tool_stats', { tool_id: 'domain_normalizer' });
    await rest('get_credits', '/credits');
    await mcp('get_credits');
  });

  test('projects: run a builder, follow it, list and read projects', async () => {
    await rest('estimate_builder', '/projects/estimate', { builder_id: 'csv_import_builder', form_data: { csv_text: csv } });
    await mcp('estimate_builder', { builder_id: 'google_maps_search', form_data_json: JSON.stringify({ query: 'cafes', max_results: 5 }) });
    projectId = (
      await rest('run_builder', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv }, name: 'Schemas' })
    ).project_id;
    mcpProjectId = (
      await mcp('run_builder', {
        builder_id: 'google_maps_search',
        form_data_json: JSON.stringify({ query: 'cafes in Lyon', max_results: 5 }),
      })
    ).project_id;
    // Answers while the build runs (queued or running, with progress) are checked too.
    await mcp('get_project', { project_id: mcpProjectId });
    const project = await built(projectId);
    expect(project.builder_status.type).toBe('completed');
    await built(mcpProjectId);
    await mcp('get_project', { project_id: projectId });
    await rest('list_projects', '/projects?limit=10');
    await mcp('list_projects', { limit: 10, name_search: 'Schemas' });
    await rest('update_project', `/projects/${projectId}`, { name: 'Schemas (renamed)' });
    await mcp('update_project', { project_id: mcpProjectId, name: 'Cafés' });
  });

  test('rows: add one, add several, list with filters and sorts, read one', async () => {
    columns = await rest('list_columns', `/projects/${projectId}/columns`);
    await mcp('list_columns', { project_id: projectId });
    const row = { Name: 'Hooli', Industry: 'software', Employees: '300', Country: 'USA', Nick: null };
    const added = await rest('add_row', `/projects/${projectId}/rows`, { company: row });
    await mcp('add_row', { project_id: projectId, company_json: JSON.stringify({ ...row, Name: 'Umbrella' }) });
    await rest('add_rows', `/projects/${projectId}/rows/batch`, { rows: [{ ...row, Name: 'Vandelay' }] });
    await mcp('add_rows', {
      project_id: projectId,
      rows_json: JSON.stringify([
        { ...row, Name: 'Soylent' },
        { ...row, Name: 'Tyrell' },
      ]),
    });
    // Names are unique so far: a unique key on Name, then inserts of names the project holds.
    await rest('update_project_settings', `/projects/${projectId}/settings`, { unique_columns: ['Name'] });
    await mcp('update_project_settings', { project_id: projectId, on_conflict: 'update' });
    const again = await t.api('POST', `/projects/${projectId}/rows`, { body: { company: { ...row, Nick: 'HOO' } } });
    expect(again.status).toBe(200);
    expect({ errors: closedSchemaErrors(operation('add_row').response, again.body) }).toEqual({ errors: [] });
    await mcp('add_rows', {
      project_id: projectId,
      rows_json: JSON.stringify([
        { ...row, Name: 'Tyrell' },
        { ...row, Name: 'Wayne' },
      ]),
    });
    await rest('update_project_settings', `/projects/${projectId}/settings`, { unique_columns: [] });
    await rest('export_project', `/projects/${projectId}/exports`, { columns: ['Name'] });
    await mcp('export_project', { project_id: projectId });
    const name = columns.find((c) => c.name === 'Name').col_id;
    const filter = [{ type: 'and', rules: [{ col_id: name, operator: 'contains', value: 'e' }] }];
    const sort = [{ col_id: name, direction: 'desc' }];
    await rest('get_project_rows', `/projects/${projectId}/rows?page_size=3&filter_groups=${enc(filter)}&sort_rules=${enc(sort)}`);
    await mcp('get_project_rows', {
      project_id: projectId,
      page: 1,
      page_size: 3,
      filter_groups_json: JSON.stringify(filter),
      sort_rules_json: JSON.stringify(sort),
    });
    await rest('get_row', `/projects/${projectId}/rows/${added.row_id}`);
    await mcp('get_row', { project_id: projectId, row_id: added.row_id });
    await rest('update_row', `/projects/${projectId}/rows/${added.row_id}`, { cells: { Nick: 'HOO' } });
    await mcp('update_row', { project_id: projectId, row_id: added.row_id, cells_json: JSON.stringify({ Employees: '310' }) });
  });

  test('tool columns: every column shape (auto-run, run condition, waterfall with a cap) and every cell state', async () => {
    await rest('create_column', `/projects/${projectId}/columns`, {
      name: 'Shout',
      tool_id: 'formula',
      config: { expression: '$uppercase(Name)' },
      auto_run: true,
      run_condition: 'Country = "France"',
    });
    await mcp('create_column', {
      project_id: projectId,
      name: 'Label',
      waterfall_json: JSON.stringify([
        { tool_id: 'formula', config: { expression: '{{Nick}}' } },
        { tool_id: 'formula', config: { expression: '$lowercase(Name)' } },
      ]),
      max_credits_per_row: 5,
    });
    await mcp('create_column', {
      project_id: projectId,
      name: 'Broken',
      tool_id: 'formula',
      config_json: JSON.stringify({ expression: '$number("x") + {{Name}}' }),
    });
    await rest('estimate_columns', `/projects/${projectId}/columns/estimate`, {});
    await mcp('estimate_columns', { project_id: projectId, mode: 'all' });
    await rest('run_pending_columns', `/projects/${projectId}/columns/run`, {});
    await mcp('run_pending_columns', { project_id: projectId, include_errors: true });
    // Waiting on the run: both doors answer the wait's state.
    await rest('wait_for_project', `/projects/${projectId}/wait?wait_seconds=20`);
    await mcp('wait_for_project', { project_id: projectId, wait_seconds: 20 });
    const rows = await settled(projectId);
    const statuses = new Set(rows.flatMap((r) => Object.values(r.company).map((c: any) => c.status)));
    for (const status of ['default', 'completed', 'skipped', 'error']) expect(statuses).toContain(status);
    // Every tool column shape, as list_columns and get_project show it.
    await rest('list_columns', `/projects/${projectId}/columns`);
    await mcp('list_columns', { project_id: projectId });
    await rest('get_project', `/projects/${projectId}`);
    await mcp('get_project_rows', { project_id: projectId, page_size: 100 });
    await rest('get_column_progress', `/projects/${projectId}/columns/progress`);
    await mcp('get_column_progress', { project_id: projectId });
  });

  test('filters: save and read them back', async () => {
    const name = columns.find((c) => c.name === 'Name').col_id;
    const groups = [
      {
        type: 'or',
        rules: [
          { col_id: name, operator: 'starts_with', value: 'A' },
          { type: 'and', rules: [{ col_id: name, operator: 'is_not_empty' }] },
        ],
      },
    ];
    await rest('set_filters', `/projects/${projectId}/filters`, { filter_groups: groups });
    await rest('get_filters', `/projects/${projectId}/filters`);
    await mcp('set_filters', { project_id: projectId, filter_groups_json: JSON.stringify(groups) });
    await mcp('get_filters', { project_id: projectId });
  });

  test('ICPs: create, list, read, update, score into a column, follow the run, delete', async () => {
    const definition = { industries: ['software'], employee_range: { min: 50, max: 500 }, locations: ['France'] };
    const icp = await rest('create_icp', '/icps', { name: 'EU software', definition });
    const other = await mcp('create_icp', { name: 'Retail', definition_json: JSON.stringify({ industries: ['retail'] }) });
    await rest('list_icps', '/icps');
    await mcp('list_icps');
    await rest('get_icp', `/icps/${icp.id}`);
    await mcp('get_icp', { icp_id: other.id });
    await rest('update_icp', `/icps/${icp.id}`, { name: 'EU software, mid-size' });
    await mcp('update_icp', { icp_id: other.id, definition_json: JSON.stringify({ industries: ['retail'], keywords: ['shop'] }) });
    const scored = await rest('score_icp', `/icps/${icp.id}/score`, { project_id: projectId, col_name: 'Fit' });
    const plain = await mcp('score_icp', { icp_id: other.id, project_id: projectId });
    await rest('get_icp_score_run', `/icps/${icp.id}/score/${scored.run_id}`);
    await mcp('get_icp_score_run', { icp_id: other.id, run_id: plain.run_id });
    await rest('list_columns', `/projects/${projectId}/columns`);
    await rest('delete_icp', `/icps/${icp.id}`);
    await mcp('delete_icp', { icp_id: other.id });
  });

  test('webhooks, inbound URLs and schedules: create, list, log, re-send, delete', async () => {
    const endpoint = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null, { status: 204 }) });
    const restore = setEnv({ ALLOW_PRIVATE_NETWORK: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${endpoint.port}/hook`;
      const hook = await rest('create_webhook', '/webhooks', { url, events: ['builder.completed'], description: 'REST' });
      const other = await mcp('create_webhook', { url, events_json: JSON.stringify(['column.completed', 'row.enriched']) });
      await rest('list_webhooks', '/webhooks');
      await mcp('list_webhooks');
      await recordEvent(t.service.kernel, t.workspaceId, 'builder.completed', 'schema-test', { project_id: projectId });
      for (let i = 0; (await t.api('GET', `/webhooks/${hook.id}/deliveries`)).body.deliveries[0]?.status !== 'delivered'; i++) {
        if (i > 200) throw new Error('not delivered');
        await Bun.sleep(25);
      }
      const log = await rest('list_webhook_deliveries', `/webhooks/${hook.id}/deliveries`);
      await mcp('list_webhook_deliveries', { webhook_id: hook.id, limit: 5 });
      await rest('resend_webhook_delivery', `/webhooks/${hook.id}/deliveries/${log.deliveries[0].id}/resend`);
      await mcp('resend_webhook_delivery', { webhook_id: hook.id, delivery_id: log.deliveries[0].id });
      await rest('delete_webhook', `/webhooks/${hook.id}`);
      await mcp('delete_webhook', { webhook_id: other.id });
    } finally {
      restore();
      endpoint.stop(true);
    }
    await rest('update_project_settings', `/projects/${projectId}/settings`, { unique_columns: ['Name'] });
    await rest('set_project_schedule', `/projects/${projectId}/schedule`, { cron: '0 7 * * 1-5', timezone: 'Europe/Paris' });
    await mcp('set_project_schedule', { project_id: projectId, cron: '30 6 * * *' });
    await rest('get_project_schedule', `/projects/${projectId}/schedule`);
    await mcp('get_project_schedule', { project_id: projectId });
    await rest('delete_project_schedule', `/projects/${projectId}/schedule`);
    await mcp('delete_project_schedule', { project_id: projectId });
    await rest('update_project_settings', `/projects/${projectId}/settings`, { unique_columns: [] });
    await rest('create_inbound_url', `/projects/${projectId}/inbound`);
    await mcp('create_inbound_url', { project_id: projectId });
    await rest('delete_inbound_url', `/projects/${projectId}/inbound`);
    await mcp('delete_inbound_url', { project_id: projectId });
  });

  test('deletes: columns, rows and projects', async () => {
    const extra = await rest('create_column', `/projects/${projectId}/columns`, {
      name: 'To delete (REST)',
      tool_id: 'formula',
      config: { expression: '1' },
    });
    await rest('update_column', `/projects/${projectId}/columns/${extra.col_id}`, { name: 'To delete (renamed)', run_condition: null });
    await rest('delete_column', `/projects/${projectId}/columns/${extra.col_id}`);
    const other = await rest('create_column', `/projects/${projectId}/columns`, {
      name: 'To delete (MCP)',
      tool_id: 'formula',
      config: { expression: '2' },
    });
    await mcp('update_column', {
      project_id: projectId,
      col_id: other.col_id,
      config_json: JSON.stringify({ expression: '3' }),
      auto_run: true,
    });
    await mcp('delete_column', { project_id: projectId, col_id: other.col_id });
    const page = await rest('get_project_rows', `/projects/${projectId}/rows?page_size=2`);
    await rest('search_project_rows', `/projects/${projectId}/rows/search`, { page_size: 2, sort_rules: [] });
    await rest('delete_rows', `/projects/${projectId}/rows`, { row_ids: [page.rows[0].id] });
    await mcp('delete_rows', { project_id: projectId, row_ids_json: JSON.stringify([page.rows[1].id, '999999']) });
    await mcp('delete_project', { project_id: mcpProjectId });
    await rest('delete_project', `/projects/${projectId}`);
  });

  test('the flow above called every operation of the table through both doors', () => {
    const names = operations.map((op) => op.name);
    expect(names.filter((n) => !exercised.rest.has(n))).toEqual([]);
    const tools = operations.filter((op) => !op.restOnly).map((op) => op.name);
    expect(tools.filter((n) => !exercised.mcp.has(n))).toEqual([]);
  });
});
