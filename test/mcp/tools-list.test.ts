import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DIALECTS } from '../support/databases.ts';
import { type McpTestService, startMcpTestService } from './mcp-support.ts';

const SPEC_TOOLS = [
  'list_builders',
  'list_tools',
  'search_tools',
  'list_projects',
  'get_project',
  'get_project_rows',
  'run_builder',
  'create_column',
  'run_pending_columns',
  'delete_project',
  'delete_rows',
];
const DESIGN_TOOLS = [
  'list_columns',
  'add_rows',
  'get_filters',
  'set_filters',
  'list_icps',
  'create_icp',
  'get_icp',
  'update_icp',
  'delete_icp',
  'score_icp',
  'get_credits',
];

describe.each(DIALECTS)('MCP tools/list on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let tools: Map<string, any>;
  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = await t.client();
    tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool]));
  });
  afterAll(() => t.stop());

  const args = (name: string) => Object.keys(tools.get(name).inputSchema.properties).sort();
  const required = (name: string) => (tools.get(name).inputSchema.required ?? []).slice().sort();

  test('lists the eleven tools of the spec and the extras of the design, by those exact names', () => {
    for (const name of [...SPEC_TOOLS, ...DESIGN_TOOLS]) expect(tools.has(name)).toBe(true);
  });

  test('every REST operation but the REST-only ones is a tool: one definition, two doors', async () => {
    const { operations } = await import('../../core/operations/index.ts');
    expect([...tools.keys()].sort()).toEqual(
      operations
        .filter((op) => !op.restOnly)
        .map((op) => op.name)
        .sort(),
    );
  });

  test('agent hints become annotations: read-only, write and destructive', () => {
    expect(tools.get('list_projects').annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tools.get('list_projects').title).toBe('List projects');
    expect(tools.get('get_project_rows').annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tools.get('run_builder').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(tools.get('create_column').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(tools.get('delete_project').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tools.get('delete_rows').annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    for (const tool of tools.values()) expect(tool.title).toBeString();
  });

  test('write tools take an optional idempotency_key; read tools do not', () => {
    for (const name of ['run_builder', 'create_column', 'run_pending_columns', 'add_rows']) {
      expect(args(name)).toContain('idempotency_key');
      expect(required(name)).not.toContain('idempotency_key');
    }
    for (const name of ['list_projects', 'get_project_rows', 'get_project']) expect(args(name)).not.toContain('idempotency_key');
  });

  test('objects, arrays and JSON query strings become string arguments named *_json', () => {
    expect(args('run_builder')).toEqual(['builder_id', 'form_data_json', 'idempotency_key', 'name', 'wait_seconds']);
    expect(required('run_builder')).toEqual(['builder_id', 'form_data_json']);
    // Other options may join these two; the spec's arguments must be there, under these names.
    expect(args('create_column')).toEqual(
      expect.arrayContaining(['auto_run', 'config_json', 'name', 'project_id', 'run_condition', 'tool_id', 'waterfall_json']),
    );
    expect(args('create_column')).not.toContain('config');
    expect(args('run_pending_columns')).toEqual(expect.arrayContaining(['col_ids_json', 'project_id']));
    expect(required('run_pending_columns')).toEqual(['project_id']);
    expect(args('set_filters')).toEqual(['filter_groups_json', 'project_id']);
    expect(args('get_project_rows')).toEqual([
      'columns_json',
      'filter_groups_json',
      'format',
      'include_meta',
      'page',
      'page_size',
      'project_id',
      'sort_rules_json',
    ]);
    expect(required('get_project_rows')).toEqual(['project_id']);
    expect(args('add_rows')).toEqual(['idempotency_key', 'project_id', 'rows_json']);
    expect(args('create_icp')).toEqual(['definition_json', 'idempotency_key', 'name']);
    expect(args('update_icp')).toEqual(['definition_json', 'icp_id', 'name']);
    expect(args('score_icp')).toEqual(['col_name', 'icp_id', 'idempotency_key', 'project_id']);
    expect(args('delete_rows')).toEqual(['project_id', 'row_ids_json']);
    expect(args('list_projects')).toEqual(['limit', 'name_search', 'offset', 'page']);
    expect(required('list_projects')).toEqual([]);
  });

  test('input schemas are real JSON Schema: typed scalars, strings for JSON, no unknown arguments', () => {
    const rows = tools.get('get_project_rows').inputSchema;
    expect(rows.type).toBe('object');
    expect(rows.additionalProperties).toBe(false);
    expect(rows.properties.page).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    expect(rows.properties.page_size).toMatchObject({ type: 'integer', maximum: 100 });
    expect(rows.properties.filter_groups_json).toMatchObject({ type: 'string', contentMediaType: 'application/json' });
    const column = tools.get('create_column').inputSchema.properties;
    expect(column.auto_run.type).toBe('boolean');
    expect(column.config_json.type).toBe('string');
    expect(column.config_json.description).toContain('JSON');
    const form = tools.get('run_builder').inputSchema.properties.form_data_json;
    expect(form.type).toBe('string');
  });

  test('builder_id and tool_id arguments name the registered ids', () => {
    const builder = tools.get('run_builder').inputSchema.properties.builder_id.description;
    expect(builder).toContain('manual_list_builder');
    expect(builder).toContain('google_maps_search');
    const tool = tools.get('create_column').inputSchema.properties.tool_id.description;
    for (const id of ['formula', 'domain_normalizer', 'phone_normalizer', 'icp_score']) expect(tool).toContain(id);
  });

  test('descriptions tell an agent what the tool does and what it answers (the envelope once, in the instructions)', () => {
    for (const tool of tools.values()) {
      expect(tool.description.length).toBeGreaterThan(60);
      expect(tool.description).toMatch(/\(REST: (GET|POST|PUT|PATCH|DELETE) \/.+\)$/);
    }
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toContain('{"ok":true,"data":…}');
    expect(instructions).toContain('"status_code":N');
    expect(tools.get('get_credits').description).toContain('spent per plugin');
  });
});
