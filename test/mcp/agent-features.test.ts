import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DIALECTS } from '../support/databases.ts';
import { call, data, type McpTestService, startMcpTestService } from './mcp-support.ts';

/**
 * What agents use beyond tools (docs/mcp.md): project resources and their templates, the flow
 * prompts, completions of their arguments, logging/setLevel; and results sized for a context:
 * get_project_rows `columns_json` and `format: "values"`, every result under MCP_MAX_RESULT_BYTES.
 */

/** A JSON-RPC error's code, from what the SDK client throws. */
const rpcCode = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as { code?: number }).code;
  }
  throw new Error('expected a JSON-RPC error');
};

describe.each(DIALECTS)('MCP resources, prompts and completions on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let projectId: string;
  let foreignProject: string;

  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = await t.client();
    const made = await data(client, 'run_builder', {
      builder_id: 'google_maps_search',
      form_data_json: JSON.stringify({ query: 'dentists in Lyon', max_results: 12 }),
      wait_seconds: 20,
    });
    projectId = made.project_id;
    await data(client, 'create_column', {
      project_id: projectId,
      name: 'Shout',
      tool_id: 'formula',
      config_json: JSON.stringify({ expression: '$uppercase(Name)' }),
    });
    await data(client, 'run_pending_columns', { project_id: projectId, wait_seconds: 20 });
    const other = await t.newWorkspace();
    const foreign = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Hidden' }, name: 'Hidden project' },
      headers: { 'service-api-key': other.key },
    });
    foreignProject = foreign.body.project_id;
  });
  afterAll(() => t.stop());

  test('capabilities are declared for what works: tools, resources, prompts, completions, logging', () => {
    const caps = client.getServerCapabilities() ?? {};
    expect(Object.keys(caps).sort()).toEqual(['completions', 'logging', 'prompts', 'resources', 'tools']);
    expect(caps.resources?.subscribe).toBeUndefined();
  });

  test('resources: the caller’s projects, two templates, reads that answer what the tools answer', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(`workflow://projects/${projectId}`);
    expect(resources.some((r) => r.uri.includes(foreignProject))).toBe(false);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual([
      'workflow://projects/{project_id}',
      'workflow://projects/{project_id}/rows{?page,page_size}',
    ]);
    const project = await client.readResource({ uri: `workflow://projects/${projectId}` });
    expect(project.contents[0]?.mimeType).toBe('application/json');
    expect(JSON.parse((project.contents[0] as { text: string }).text)).toEqual(
      await data(client, 'get_project', { project_id: projectId }),
    );
    const rows = await client.readResource({ uri: `workflow://projects/${projectId}/rows?page=2&page_size=5` });
    const page = JSON.parse((rows.contents[0] as { text: string }).text);
    expect(page).toMatchObject({ page: 2, page_size: 5, total_rows: 12 });
    expect(page.rows).toHaveLength(5);
    expect(page.rows[0].values.Shout).toBe(page.rows[0].values.Name.toUpperCase());
  });

  test('resources: unknown URIs and another workspace’s project are "Resource not found" (-32002)', async () => {
    expect(await rpcCode(client.readResource({ uri: 'workflow://elsewhere/1' }))).toBe(-32002);
    expect(await rpcCode(client.readResource({ uri: 'workflow://projects/%zz' }))).toBe(-32002);
    expect(await rpcCode(client.readResource({ uri: `workflow://projects/${foreignProject}` }))).toBe(-32002);
    expect(await rpcCode(client.readResource({ uri: 'workflow://projects/no-such-project/rows' }))).toBe(-32002);
    expect(await rpcCode(client.readResource({ uri: `workflow://projects/${projectId}/rows?page=0` }))).toBe(-32602);
  });

  test('prompts: the typical flows, with their arguments checked', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['find_and_enrich_companies', 'enrich_pasted_list']);
    const got = await client.getPrompt({
      name: 'find_and_enrich_companies',
      arguments: { query: 'bakeries in Nantes', tool_id: 'website_info' },
    });
    const text = (got.messages[0] as { content: { text: string } }).content.text;
    expect(text).toContain('run_builder');
    expect(text).toContain('bakeries in Nantes');
    expect(text).toContain('wait_seconds');
    expect(text).toContain('"website_info"');
    // The builder is found in the registry: a company search whose form takes a query.
    expect(text).toContain('builder_id "google_maps_search"');
    expect(await rpcCode(client.getPrompt({ name: 'find_and_enrich_companies', arguments: {} }))).toBe(-32602);
    expect(await rpcCode(client.getPrompt({ name: 'no_such_prompt' }))).toBe(-32602);
  });

  test('completions: builder and tool ids for prompts, the caller’s project ids for templates; unknown arguments are errors', async () => {
    const tools = await client.complete({
      ref: { type: 'ref/prompt', name: 'enrich_pasted_list' },
      argument: { name: 'tool_id', value: 'dom' },
    });
    expect(tools.completion.values).toContain('domain_normalizer');
    expect(tools.completion.values.every((v) => v.startsWith('dom'))).toBe(true);
    const builders = await client.complete({
      ref: { type: 'ref/prompt', name: 'find_and_enrich_companies' },
      argument: { name: 'builder_id', value: 'goo' },
    });
    expect(builders.completion.values).toEqual(['google_maps_search']);
    const byName = await client.complete({
      ref: { type: 'ref/resource', uri: 'workflow://projects/{project_id}' },
      argument: { name: 'project_id', value: 'dentists' },
    });
    expect(byName.completion.values).toEqual([projectId]);
    const byId = await client.complete({
      ref: { type: 'ref/resource', uri: 'workflow://projects/{project_id}/rows{?page,page_size}' },
      argument: { name: 'project_id', value: projectId.slice(0, 8) },
    });
    expect(byId.completion.values).toContain(projectId);
    expect(byId.completion.values).not.toContain(foreignProject);
    expect(
      await rpcCode(client.complete({ ref: { type: 'ref/prompt', name: 'enrich_pasted_list' }, argument: { name: 'colour', value: '' } })),
    ).toBe(-32602);
    expect(await rpcCode(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'tool_id', value: '' } }))).toBe(
      -32602,
    );
    expect(
      await rpcCode(client.complete({ ref: { type: 'ref/resource', uri: 'workflow://nope/{x}' }, argument: { name: 'x', value: '' } })),
    ).toBe(-32602);
  });

  test('logging/setLevel is accepted', async () => {
    await client.setLoggingLevel('warning');
  });

  test('get_project_rows: columns_json picks columns, format "values" is a third of the size, statuses only where not completed', async () => {
    const cells = await call(client, 'get_project_rows', { project_id: projectId, page_size: 12 });
    const values = await call(client, 'get_project_rows', { project_id: projectId, page_size: 12, format: 'values' });
    expect(JSON.stringify(values).length).toBeLessThan(JSON.stringify(cells).length / 2);
    const row = values.data.rows[0];
    expect(Object.keys(row).sort()).toEqual(['id', 'values']); // every tool cell completed: no status map
    expect(row.values.Shout).toBe(cells.data.rows[0].company.Shout.value);
    const some = await data(client, 'get_project_rows', {
      project_id: projectId,
      format: 'values',
      columns_json: JSON.stringify(['Name', 'Shout']),
    });
    expect(Object.keys(some.rows[0].values)).toEqual(['Name', 'Shout']);
    const unknown = await call(client, 'get_project_rows', { project_id: projectId, columns_json: JSON.stringify(['Nope']) });
    expect(unknown).toMatchObject({ ok: false, code: 'validation_error' });
    expect(unknown.detail.message).toContain('Nope');
    // REST takes the same: ?format=values&columns=[…].
    const rest = await t.api('GET', `/projects/${projectId}/rows?format=values&columns=${encodeURIComponent('["Name"]')}`);
    expect(Object.keys(rest.body.rows[0].values)).toEqual(['Name']);
    // A cell still to run shows its status.
    await data(client, 'create_column', {
      project_id: projectId,
      name: 'Later',
      tool_id: 'formula',
      config_json: JSON.stringify({ expression: 'Name' }),
    });
    const pending = await data(client, 'get_project_rows', { project_id: projectId, format: 'values', page_size: 1 });
    expect(pending.rows[0].status).toEqual({ Later: 'pending' });
  });
});

describe('MCP results under MCP_MAX_RESULT_BYTES', () => {
  let t: McpTestService;
  let client: Client;
  let projectId: string;

  beforeAll(async () => {
    t = await startMcpTestService('sqlite', { MCP_MAX_RESULT_BYTES: '6000' });
    client = await t.client();
    projectId = (
      await data(client, 'run_builder', {
        builder_id: 'google_maps_search',
        form_data_json: JSON.stringify({ query: 'dentists in Lyon', max_results: 90 }),
        wait_seconds: 30,
      })
    ).project_id;
  });
  afterAll(() => t.stop());

  test('a page too large is cut to the aligned page that fits; following page + 1 reads every row once', async () => {
    const first = (await client.callTool({ name: 'get_project_rows', arguments: { project_id: projectId, page_size: 100 } })) as any;
    expect(first.content[0].text.length).toBeLessThanOrEqual(6000);
    const envelope = first.structuredContent;
    expect(envelope.ok).toBe(true);
    expect(envelope.truncated).toContain('MCP_MAX_RESULT_BYTES');
    const size = envelope.data.page_size;
    expect(size).toBeLessThan(90);
    expect(envelope.data.rows).toHaveLength(size);
    const seen = envelope.data.rows.map((r: any) => r.id);
    for (let page = 2; seen.length < 90; page++) {
      const next = await call(client, 'get_project_rows', { project_id: projectId, page, page_size: size });
      expect(next.data.rows.length).toBeGreaterThan(0);
      seen.push(...next.data.rows.map((r: any) => r.id));
    }
    expect(new Set(seen).size).toBe(90);
    // A later page is cut to a size that divides its offset: it is exactly that page of that size.
    const later = await call(client, 'get_project_rows', { project_id: projectId, page: 2, page_size: 30 });
    const k = later.data.page_size;
    expect(30 % k).toBe(0);
    expect(later.data.rows[0].id).toBe(seen[30]);
  });

  test('any other answer over the bound is an error that says how to ask for less', async () => {
    const tools = await call(client, 'list_tools');
    expect(tools).toMatchObject({ ok: false, code: 'payload_too_large', status_code: 413 });
    expect(tools.detail.message).toContain('search_tools');
  });
});
