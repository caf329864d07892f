import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DIALECTS } from '../support/databases.ts';
import { call, data, type McpTestService, startMcpTestService } from './mcp-support.ts';

/**
 * The MCP door hands its arguments to the pipeline as REST does: path ids at once, everything else
 * read after the ownership check. So another workspace's project or ICP is a 404 on both doors
 * whatever the other arguments hold, and a bad argument of one's own call answers the REST status
 * of that operation (its invalidStatus). Nothing is written by any of these calls.
 */

describe.each(DIALECTS)('ownership before arguments, on both doors, on %s', (dialect) => {
  let t: McpTestService;
  let owner: Client;
  let intruder: Client;
  let intruderKey: string;
  let projectId: string;
  let icpId: string;
  /** A REST call as the intruder, with a raw body (malformed JSON included). */
  const rest = async (method: string, path: string, body?: string) =>
    (
      await t.api(method, path, {
        headers: { 'service-api-key': intruderKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { rawBody: body } : {}),
      })
    ).status;
  const statusOf = async (name: string, args: Record<string, unknown>) => (await call(intruder, name, args)).status_code;

  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    owner = await t.client();
    projectId = (await data(owner, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Acme"}' }))
      .project_id;
    icpId = (await data(owner, 'create_icp', { name: 'mine', definition_json: '{"industries":["software"]}' })).id;
    const other = await t.newWorkspace();
    intruderKey = other.key;
    intruder = await t.client({ 'service-api-key': other.key });
  });
  afterAll(() => t.stop());

  test('malformed JSON in a *_json argument: 404 on both doors, not a parse error', async () => {
    expect(await statusOf('add_rows', { project_id: projectId, rows_json: '[{' })).toBe(404);
    expect(await rest('POST', `/projects/${projectId}/rows/batch`, '{"rows": [{')).toBe(404);
    expect(await statusOf('get_project_rows', { project_id: projectId, filter_groups_json: '[{' })).toBe(404);
    expect(await rest('GET', `/projects/${projectId}/rows?filter_groups=${encodeURIComponent('[{')}`)).toBe(404);
    expect(await statusOf('set_filters', { project_id: projectId, filter_groups_json: '{' })).toBe(404);
    expect(await rest('PUT', `/projects/${projectId}/filters`, '{')).toBe(404);
    expect(await statusOf('update_icp', { icp_id: icpId, definition_json: '{"industries":' })).toBe(404);
    expect(await rest('PUT', `/icps/${icpId}`, '{"definition": {')).toBe(404);
  });

  test('unknown arguments and a bad idempotency_key: 404 on both doors', async () => {
    expect(await statusOf('get_project', { project_id: projectId, projct: 'x' })).toBe(404);
    expect(await rest('GET', `/projects/${projectId}?projct=x`)).toBe(404);
    expect(await statusOf('get_icp', { icp_id: icpId, verbose: true })).toBe(404);
    expect(await rest('GET', `/icps/${icpId}?verbose=true`)).toBe(404);
    expect(await statusOf('create_column', { project_id: projectId, name: 'x', config_json: '[]', colour: 'red' })).toBe(404);
    expect(await rest('POST', `/projects/${projectId}/columns`, '{"name":"x","config":[],"colour":"red"}')).toBe(404);
    expect(await statusOf('add_rows', { project_id: projectId, rows_json: '[]', idempotency_key: 5 })).toBe(404);
  });

  test('the owner’s own bad arguments answer the operation’s REST status (invalidStatus), and nothing is written', async () => {
    const ownRest = async (method: string, path: string, body: string) =>
      (await t.api(method, path, { headers: { 'content-type': 'application/json' }, rawBody: body })).status;
    // add_rows refuses invalid input with 403, run_builder with 400, the others with 422.
    expect((await call(owner, 'add_rows', { project_id: projectId, rows_json: '[]', extra: 1 })).status_code).toBe(403);
    expect(await ownRest('POST', `/projects/${projectId}/rows/batch`, '{"rows": [], "extra": 1}')).toBe(403);
    const build = await call(owner, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: '{"companies":"B"}', extra: 1 });
    expect(build.status_code).toBe(400);
    expect(await ownRest('POST', '/projects', '{"builder_id":"manual_list_builder","form_data":{"companies":"B"},"extra":1}')).toBe(400);
    expect((await call(owner, 'create_column', { project_id: projectId, name: 'x', tool_id: 'formula', colour: 'red' })).status_code).toBe(
      422,
    );
    expect(await ownRest('POST', `/projects/${projectId}/columns`, '{"name":"x","tool_id":"formula","colour":"red"}')).toBe(422);
    const project = await data(owner, 'get_project', { project_id: projectId });
    expect(project.row_count).toBe(1);
    expect((await data(owner, 'list_columns', { project_id: projectId })).map((c: { name: string }) => c.name)).not.toContain('x');
    expect((await data(owner, 'list_projects')).total).toBe(1);
  });
});
