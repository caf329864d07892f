import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DIALECTS } from '../support/databases.ts';
import { call, connect, data, type McpTestService, rpc, startMcpTestService } from './mcp-support.ts';

const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe.each(DIALECTS)('MCP error envelopes on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let projectId: string;
  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = await t.client();
    projectId = (await data(client, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Acme"}' }))
      .project_id;
  });
  afterAll(() => t.stop());

  test('malformed JSON in a *_json argument is parse_error (400) naming the argument', async () => {
    const env = await call(client, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '{"companies": "Acme"' });
    expect(env).toMatchObject({ ok: false, error: true, code: 'parse_error', status_code: 400, detail: { argument: 'form_data_json' } });
    expect(env.detail.message).toContain('not valid JSON');
    const rows = await call(client, 'get_project_rows', { project_id: projectId, filter_groups_json: '[{' });
    expect(rows).toMatchObject({ code: 'parse_error', status_code: 400, detail: { argument: 'filter_groups_json' } });
  });

  test('input that breaks the schema is validation_error, with the REST status of the operation', async () => {
    const builder = await call(client, 'run_builder', { builder_id: 'no_such_builder', form_data_json: '{}' });
    expect(builder).toMatchObject({ code: 'validation_error', status_code: 400 });
    const paging = await call(client, 'list_projects', { limit: 0 });
    expect(paging).toMatchObject({ code: 'validation_error', status_code: 422 });
    expect(paging.detail.errors[0].path).toBe('limit');
    const filter = await call(client, 'get_project_rows', {
      project_id: projectId,
      filter_groups_json: '[{"type":"and","rules":[{"col_id":"nope","operator":"eq","value":1}]}]',
    });
    expect(filter).toMatchObject({ code: 'validation_error', status_code: 422 });
  });

  test('an unknown argument or a missing path parameter is validation_error', async () => {
    const typo = await call(client, 'get_project', { project_id: projectId, projct: 'x' });
    expect(typo).toMatchObject({ code: 'validation_error', status_code: 422 });
    expect(typo.detail.message).toContain('projct');
    expect(await call(client, 'get_project', {})).toMatchObject({ code: 'validation_error', detail: { errors: [{ path: 'project_id' }] } });
  });

  test('a missing project is not_found (404)', async () => {
    const env = await call(client, 'get_project', { project_id: '00000000-0000-0000-0000-000000000000' });
    expect(env).toEqual({ ok: false, error: true, code: 'not_found', detail: { message: expect.any(String) }, status_code: 404 });
  });

  test('another workspace’s project and ICP are not_found, whatever the arguments', async () => {
    const other = await t.newWorkspace();
    const intruder = await connect(t.mcpUrl, { 'service-api-key': other.key });
    try {
      expect(await call(intruder, 'get_project', { project_id: projectId })).toMatchObject({ code: 'not_found' });
      expect(await call(intruder, 'get_project_rows', { project_id: projectId })).toMatchObject({ code: 'not_found' });
      expect(await call(intruder, 'add_rows', { project_id: projectId, rows_json: '{"not": "an array"}' })).toMatchObject({
        code: 'not_found',
      });
      expect(await call(intruder, 'delete_project', { project_id: projectId })).toMatchObject({ code: 'not_found' });
      expect((await data(intruder, 'list_projects')).total).toBe(0);
      const icp = await data(client, 'create_icp', { name: 'mine', definition_json: '{"industries":["software"]}' });
      expect(await call(intruder, 'get_icp', { icp_id: icp.id })).toMatchObject({ code: 'not_found' });
      expect(await call(intruder, 'score_icp', { icp_id: icp.id, project_id: projectId })).toMatchObject({ code: 'not_found' });
      // Their own ICP cannot score our project either.
      const theirs = await data(intruder, 'create_icp', { name: 'theirs', definition_json: '{"industries":["software"]}' });
      expect(await call(intruder, 'score_icp', { icp_id: theirs.id, project_id: projectId })).toMatchObject({ code: 'not_found' });
    } finally {
      await intruder.close();
    }
    expect((await data(client, 'get_project', { project_id: projectId })).id).toBe(projectId);
  });

  test('a plan without API access answers forbidden envelopes (HTTP 200, isError)', async () => {
    const free = await t.newWorkspace('free');
    const res = await rpc(
      t.mcpUrl,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_projects', arguments: {} } },
      { 'service-api-key': free.key },
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.result.isError).toBe(true);
    expect(body.result.structuredContent).toMatchObject({ ok: false, error: true, code: 'forbidden', status_code: 403 });
    const freeClient = await connect(t.mcpUrl, { 'service-api-key': free.key });
    try {
      expect((await freeClient.listTools()).tools.length).toBeGreaterThan(20);
      expect(await call(freeClient, 'get_credits')).toMatchObject({ code: 'forbidden' });
    } finally {
      await freeClient.close();
    }
  });

  test('an unexpected failure is internal_error with a request id and no message or stack of its own', async () => {
    const env = await call(client, 'run_builder', { builder_id: 'exploding_builder', form_data_json: '{"anything":"x"}' });
    expect(env).toMatchObject({ ok: false, error: true, code: 'internal_error', status_code: 500 });
    const text = JSON.stringify(env);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('/srv/app');
    expect(text).not.toMatch(/\bat .+:\d+/);
    expect(env.detail.request_id).toBeString();
  });

  test('no credentials: HTTP 401, WWW-Authenticate pointing at the metadata, unauthorized envelope', async () => {
    const res = await rpc(t.mcpUrl, listTools);
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') as string;
    expect(challenge).toStartWith('Bearer resource_metadata="');
    expect(challenge).toContain('/.well-known/oauth-protected-resource/mcp"');
    expect(challenge).not.toContain('invalid_token');
    expect(await res.json()).toMatchObject({ ok: false, error: true, code: 'unauthorized', status_code: 401 });
    await expect(connect(t.mcpUrl, {})).rejects.toThrow();
  });

  test('a wrong or revoked API key: HTTP 401 with error="invalid_token"', async () => {
    const res = await rpc(t.mcpUrl, listTools, { 'service-api-key': 'wfs_00000000_nope' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await res.json()).code).toBe('unauthorized');
  });

  test('an API key sent as a bearer token works for clients that only speak bearer', async () => {
    const bearer = await connect(t.mcpUrl, { authorization: `Bearer ${t.key}` });
    try {
      expect((await data(bearer, 'list_projects')).total).toBeGreaterThan(0);
    } finally {
      await bearer.close();
    }
  });

  test('an unknown tool is a JSON-RPC error, not an envelope', async () => {
    await expect(client.callTool({ name: 'drop_database', arguments: {} })).rejects.toThrow(/Unknown tool/);
  });
});
