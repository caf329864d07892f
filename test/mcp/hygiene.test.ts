import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DIALECTS } from '../support/databases.ts';
import { call, data, type McpTestService, rpc, startMcpTestService } from './mcp-support.ts';

/**
 * MCP hygiene (docs/api.md): bad tools/call params are -32602 with a short message,
 * no message repeats its prefix, validation errors name the tool's own arguments, overlong ids are
 * refused before any lookup and never echoed, and JSON-RPC batches are refused.
 */

const toolCall = (params: unknown, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

describe.each(DIALECTS)('MCP hygiene on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let projectId: string;
  const withKey = () => ({ 'service-api-key': t.key });
  const projectCount = async () => (await data(client, 'list_projects')).total as number;
  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = await t.client();
    projectId = (await data(client, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Acme"}' }))
      .project_id;
  });
  afterAll(() => t.stop());

  describe('tools/call params', () => {
    const cases: [string, unknown, RegExp][] = [
      ['no name', { arguments: {} }, /^params\.name must be a tool's name/],
      ['a name that is no string', { name: 7 }, /^params\.name must be a tool's name/],
      ['arguments: null', { name: 'get_credits', arguments: null }, /^params\.arguments must be an object/],
      ['arguments as an array', { name: 'get_credits', arguments: [] }, /^params\.arguments must be an object/],
      ['arguments as text', { name: 'get_credits', arguments: '{}' }, /^params\.arguments must be an object/],
      ['an unknown tool', { name: 'drop_database', arguments: {} }, /^Unknown tool "drop_database"; tools\/list names the \d+ tools$/],
    ];
    test.each(cases)('%s: JSON-RPC -32602 with a short message', async (_, params, message) => {
      const res = await rpc(t.mcpUrl, toolCall(params, 9), withKey());
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32602 } });
      expect(body.error.message).toMatch(message);
      expect(body.error.message.length).toBeLessThan(200);
      expect(body.error.message).not.toContain('MCP error');
    });

    test('missing params altogether is -32602 too', async () => {
      const body = await (await rpc(t.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/call' }, withKey())).json();
      expect(body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^tools\/call needs params/) });
    });

    test('a tool name of a megabyte is not sent back', async () => {
      const body = await (await rpc(t.mcpUrl, toolCall({ name: 'x'.repeat(1_000_000) }), withKey())).json();
      expect(body.error.code).toBe(-32602);
      expect(body.error.message.length).toBeLessThan(200);
    });

    test('the SDK client reads each error with one prefix, not two', async () => {
      const error = await client.callTool({ name: 'drop_database', arguments: {} }).catch((e: Error) => e);
      expect((error as Error).message).toMatch(/^MCP error -32602: Unknown tool "drop_database"; tools\/list names the \d+ tools$/);
    });
  });

  describe('validation errors name the tool’s own arguments', () => {
    /** No REST field name is left standing alone: `form_data`, but not `form_data_json`. */
    const bare = (field: string) => new RegExp(`(?<![\\w"])${field}(?!_json|\\w)`);

    test('run_builder: form_data_json, in the message and in each error path', async () => {
      const env = await call(client, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '{}' });
      expect(env).toMatchObject({ code: 'validation_error', status_code: 400 });
      expect(env.detail.errors).toEqual([{ path: 'form_data_json.companies', message: expect.any(String) }]);
      expect(env.detail.message).toStartWith('form_data_json does not fit builder "manual_list_builder": form_data_json.companies');
      expect(env.detail.message).not.toMatch(bare('form_data'));
      const wrongType = await call(client, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '[1]' });
      expect(wrongType.detail).toEqual({
        message: 'Invalid arguments: form_data_json expected object',
        errors: [{ path: 'form_data_json', message: 'expected object' }],
      });
    });

    test('filters, rows, definitions and id lists: each *_json argument by its name', async () => {
      const filter = await call(client, 'set_filters', {
        project_id: projectId,
        filter_groups_json: '[{"type":"and","rules":[{"col_id":"nope","operator":"eq","value":1}]}]',
      });
      expect(filter.detail.errors[0].path).toBe('filter_groups_json[0].rules[0].col_id');
      expect(filter.detail.message).not.toMatch(bare('filter_groups'));
      const rows = await call(client, 'add_rows', { project_id: projectId, rows_json: '[{"Nope":1}]' });
      expect(rows).toMatchObject({ code: 'validation_error', status_code: 403, detail: { row_index: 0 } });
      expect(rows.detail.message).toStartWith('rows_json[0]: ');
      const icp = await call(client, 'create_icp', { name: 'x', definition_json: '{"bad":1}' });
      expect(icp.detail.errors).toEqual([{ path: 'definition_json.bad', message: 'is not an allowed field; remove it' }]);
      expect(icp.detail.message).toBe('Invalid arguments: definition_json.bad is not an allowed field; remove it');
      const ids = await call(client, 'delete_rows', { project_id: projectId, row_ids_json: '[]' });
      expect(ids.detail.errors[0].path).toBe('row_ids_json');
      // A plain argument keeps its name; a column name that happens to be a field stays as written.
      const column = await call(client, 'create_column', { project_id: projectId, name: 'x', tool_id: 'nope', config_json: '{}' });
      expect(column.detail.errors[0].path).toBe('tool_id');
      const key = await call(client, 'add_rows', { project_id: projectId, rows_json: '[{"Name":"A","Domain":"a.com","rows":1}]' });
      expect(key.detail.message).toBe('rows_json[0]: Invalid payload: no column is named "rows". Remove that key.');
    });

    test('a tool has arguments, not a body or query parameters', async () => {
      const paging = await call(client, 'list_projects', { limit: 0 });
      expect(paging.detail.message).toStartWith('Invalid arguments: limit ');
      expect(paging.detail.errors[0].path).toBe('limit');
    });

    test('an unknown argument is named as sent, with the arguments the tool takes', async () => {
      const env = await call(client, 'add_rows', { project_id: projectId, rows: [{ Name: 'x' }] });
      expect(env).toMatchObject({ code: 'validation_error', status_code: 403 });
      expect(env.detail.message).toBe('Unknown argument rows; this tool takes: project_id, rows_json, idempotency_key');
    });
  });

  describe('ids longer than 128 characters', () => {
    const long = `p${'9'.repeat(2_000_000)}`;
    const noEcho = (text: string) => expect(text).not.toContain('9'.repeat(200));

    test('a 2 MB project_id is refused in a short answer that does not repeat it, and no lookup runs', async () => {
      const { storage } = t.service.kernel;
      const seen: unknown[] = [];
      const [findKey, get] = [storage.workspaces.findKey, storage.projects.get];
      storage.workspaces.findKey = (hash, pid) => {
        seen.push(pid);
        return findKey.call(storage.workspaces, hash, pid);
      };
      storage.projects.get = (ws, pid) => {
        seen.push(pid);
        return get.call(storage.projects, ws, pid);
      };
      try {
        const res = await rpc(t.mcpUrl, toolCall({ name: 'get_project', arguments: { project_id: long } }), withKey());
        const text = await res.text();
        expect(text.length).toBeLessThan(2_000);
        noEcho(text);
        const envelope = JSON.parse(text).result.structuredContent;
        expect(envelope).toMatchObject({ ok: false, code: 'validation_error', status_code: 422 });
        expect(envelope.detail.message).toBe('project_id is 2000001 characters long; ids are at most 128');
      } finally {
        storage.workspaces.findKey = findKey;
        storage.projects.get = get;
      }
      expect(seen.some((id) => typeof id === 'string' && id.length > 128)).toBe(false);
    });

    test('ids in other arguments too: a body project_id, builder_id, an item of row_ids_json; nothing written', async () => {
      const before = await projectCount();
      const icp = await data(client, 'create_icp', { name: 'ids', definition_json: '{"industries":["software"]}' });
      const score = await call(client, 'score_icp', { icp_id: icp.id, project_id: long.slice(0, 5000) });
      expect(score).toMatchObject({ code: 'validation_error', status_code: 422, detail: { errors: [{ path: 'project_id' }] } });
      const builder = await call(client, 'run_builder', { builder_id: long.slice(0, 5000), form_data_json: '{"companies":"A"}' });
      expect(builder).toMatchObject({ code: 'validation_error', status_code: 400 });
      expect(builder.detail.message).toBe('builder_id is 5000 characters long; ids are at most 128');
      const rows = await call(client, 'delete_rows', { project_id: projectId, row_ids_json: JSON.stringify(['1', long.slice(0, 300)]) });
      expect(rows.detail).toMatchObject({ message: 'row_ids_json[1] is 300 characters long; ids are at most 128' });
      for (const env of [score, builder, rows]) noEcho(JSON.stringify(env));
      expect(await projectCount()).toBe(before);
      expect((await data(client, 'get_project', { project_id: projectId })).row_count).toBe(1);
    });

    test('an id of exactly 128 characters is looked up as usual (not found)', async () => {
      expect(await call(client, 'get_project', { project_id: 'x'.repeat(128) })).toMatchObject({ code: 'not_found' });
    });
  });

  describe('JSON-RPC batches', () => {
    test('a batch is 400 with -32600, whatever it holds, and none of it runs', async () => {
      const before = await projectCount();
      const create = toolCall({
        name: 'run_builder',
        arguments: { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Batch Co"}' },
      });
      for (const batch of [[create], [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, create], []]) {
        const res = await rpc(t.mcpUrl, batch, withKey());
        expect(res.status).toBe(400);
        const body = await res.json();
        expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
        expect(body.error.message).toContain('batches are not supported');
      }
      expect(await projectCount()).toBe(before);
    });

    test('a large batch (read after authentication, not before) is refused the same way', async () => {
      const padding = 'x'.repeat(100_000);
      const res = await rpc(t.mcpUrl, [{ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { padding } } }], withKey());
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe(-32600);
    });

    test('a single message still works, large or small', async () => {
      const padding = 'x'.repeat(100_000);
      const res = await rpc(t.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: { padding } } }, withKey());
      expect(res.status).toBe(200);
      expect((await res.json()).result).toEqual({});
    });
  });
});
