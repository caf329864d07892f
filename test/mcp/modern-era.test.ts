import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Subprocess } from 'bun';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { DIALECTS } from '../support/databases.ts';
import { freePort } from '../support/free-port.ts';
import { spawnProcessOf, spawnWorkerOf } from '../support/test-service.ts';
import { until } from '../support/until.ts';
import { type McpTestService, rpc, startMcpTestService } from './mcp-support.ts';

/**
 * MCP 2026-07-28 beside 2025-11-25 on the same URL (docs/mcp.md): the official 2.x client pinned
 * to the modern revision runs the typical flow without any handshake, while the 1.x client (the
 * other suites) keeps the legacy one; raw requests check what the modern era promises on the wire.
 */

const MODERN = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const modernHeaders = (method: string, name?: string) => ({
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
});

/** The envelope of a tool result (one text content holding the JSON envelope, as in the legacy era). */
function envelopeOf(result: unknown): { ok: boolean; data?: any; code?: string } {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return JSON.parse(content[0]?.text ?? 'null');
}

/** A tool's data through a 2.x client (the test fails with the envelope when the call did). */
async function toolData(client: Client, name: string, args: Record<string, unknown>) {
  const env = envelopeOf(await client.callTool({ name, arguments: args }));
  if (!env.ok) throw new Error(`${name}: ${JSON.stringify(env)}`);
  return env.data;
}

describe.each(DIALECTS)('MCP 2026-07-28 on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  const key = () => ({ 'service-api-key': t.key });
  let ids = 0;
  /** A raw 2026-07-28 request (its envelope and headers), with the key: its JSON answer. */
  const modern = async (method: string, params: Record<string, unknown> = {}, name?: string) =>
    (
      await rpc(
        t.mcpUrl,
        { jsonrpc: '2.0', id: ++ids, method, params: { ...params, _meta: envelope } },
        { ...key(), ...modernHeaders(method, name) },
      )
    ).json();
  beforeAll(async () => {
    t = await startMcpTestService(dialect);
    client = new Client({ name: 'modern-tests', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(t.mcpUrl), { requestInit: { headers: key() } }));
  });
  afterAll(async () => {
    await client.close();
    await t.stop();
  });

  test('the 2.x client speaks the modern revision, no session: the typical flow runs', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const call = (name: string, args: Record<string, unknown>) => toolData(client, name, args);
    const run = await call('run_builder', {
      builder_id: 'manual_list_builder',
      form_data_json: '{"companies":"Acme\\nGlobex"}',
      wait_seconds: 30,
    });
    const projectId = run.project_id as string;
    const rows = await call('get_project_rows', { project_id: projectId, format: 'values' });
    expect(rows.total_rows).toBe(2);
    const column = await call('create_column', {
      project_id: projectId,
      name: 'Upper',
      tool_id: 'formula',
      config_json: JSON.stringify({ expression: '$uppercase(Name)' }),
    });
    expect(column.col_id).toBeString();
    await call('run_pending_columns', { project_id: projectId, col_ids_json: JSON.stringify([column.col_id]), wait_seconds: 30 });
    const filled = await call('get_project_rows', { project_id: projectId, format: 'values' });
    const uppers = (filled.rows as { values: Record<string, unknown> }[]).map((r) => r.values.Upper).sort();
    expect(uppers).toEqual(['ACME', 'GLOBEX']);
    // A resource of the project reads in the same era.
    const read = await client.readResource({ uri: `workflow://projects/${projectId}` });
    expect(JSON.stringify(read.contents)).toContain(projectId);
  });

  test('server/discover names both revisions; lists carry resultType and how long they may be cached', async () => {
    const discovered = await modern('server/discover');
    expect(discovered.result.supportedVersions).toContain(MODERN);
    expect(discovered.result.capabilities.tools).toBeDefined();
    const listed = await modern('tools/list');
    expect(listed.result.resultType).toBe('complete');
    expect(listed.result.ttlMs).toBeGreaterThan(0);
    expect(listed.result.cacheScope).toBe('public');
    // The same order every time (clients cache and diff it).
    const again = await modern('tools/list');
    expect(again.result.tools.map((x: { name: string }) => x.name)).toEqual(listed.result.tools.map((x: { name: string }) => x.name));
  });

  test('a header that disagrees with the body is -32020; an unknown revision is -32022 naming the ones spoken', async () => {
    const mismatch = await rpc(
      t.mcpUrl,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_credits', arguments: {}, _meta: envelope } },
      { ...key(), ...modernHeaders('tools/call', 'list_projects') },
    );
    expect(mismatch.status).toBe(400);
    expect((await mismatch.json()).error.code).toBe(-32020);
    const unknown = await rpc(
      t.mcpUrl,
      {
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/list',
        params: { _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      },
      { ...key(), ...modernHeaders('tools/list'), 'mcp-protocol-version': '2099-01-01' },
    );
    const body = await unknown.json();
    expect(body.error.code).toBe(-32022);
    expect(body.error.data.supported).toContain(MODERN);
  });

  test('a resource not found is -32602 in the modern era and -32002 for legacy clients; another workspace is not found', async () => {
    const uri = 'workflow://projects/00000000-0000-0000-0000-000000000000';
    const notFound = await modern('resources/read', { uri }, uri);
    expect(notFound.error.code).toBe(-32602);
    const legacy = await (await rpc(t.mcpUrl, { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri } }, key())).json();
    expect(legacy.error.code).toBe(-32002);
  });

  test("subscriptions/listen on a project's resource: a row added through REST arrives as resources/updated; another workspace's is not found", async () => {
    const made = envelopeOf(
      await client.callTool({
        name: 'run_builder',
        arguments: { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Acme"}' },
      }),
    );
    const uri = `workflow://projects/${made.data.project_id}`;
    const updated: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', async (n) => {
      updated.push(String((n.params as { uri?: string }).uri));
    });
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uri]);
    const added = await t.api('POST', `/projects/${made.data.project_id}/rows`, { body: { company: { Name: 'Globex', Domain: null } } });
    expect(added.status).toBe(201);
    await until(() => (updated.includes(uri) ? true : undefined), 20_000);
    await subscription.close();
    // A project of another workspace cannot be listened to (it is not found, as a read of it is not).
    const other = await t.newWorkspace();
    const theirs = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Hidden' } },
      headers: { 'service-api-key': other.key },
    });
    await expect(client.listen({ resourceSubscriptions: [`workflow://projects/${theirs.body.project_id}`] })).rejects.toThrow(/not found/i);
  });

  test('without credentials the modern era gets the same 401 and resource metadata pointer', async () => {
    const res = await rpc(
      t.mcpUrl,
      { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: envelope } },
      modernHeaders('tools/list'),
    );
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata=');
  });
});

describe('MCP 2026-07-28 across processes (MariaDB + Redis)', () => {
  // Any request to any process: an API process (this one, running no jobs), a second MCP process of
  // its own (SERVE=mcp) and a worker process; the 2.x client sends its requests to both MCP processes in turn.
  if (!DIALECTS.includes('mysql')) return;
  let t: McpTestService;
  let mcpProcess: Subprocess;
  let worker: Subprocess;
  let client: Client;
  beforeAll(async () => {
    t = await startMcpTestService('mysql', { WORKERS: '0' });
    const port = freePort();
    mcpProcess = spawnProcessOf(t, 'app/main.ts', { SERVE: 'mcp', MCP_PORT: String(port) });
    worker = spawnWorkerOf(t);
    const other = `http://127.0.0.1:${port}/mcp`;
    await until(async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok ? true : undefined), 30_000);
    let turn = 0;
    const alternate = (_input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('service-api-key', t.key);
      return fetch(turn++ % 2 === 0 ? t.mcpUrl : other, { ...init, headers });
    };
    client = new Client({ name: 'modern-processes', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(t.mcpUrl), { fetch: alternate as typeof fetch }));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    mcpProcess?.kill();
    worker?.kill();
    await Promise.all([mcpProcess?.exited, worker?.exited]);
    await t?.stop();
  });

  test('the typical flow with requests spread over two MCP processes, cells filled by a worker process', async () => {
    const call = (name: string, args: Record<string, unknown>) => toolData(client, name, args);
    const run = await call('run_builder', {
      builder_id: 'manual_list_builder',
      form_data_json: '{"companies":"Acme\\nGlobex\\nInitech"}',
      wait_seconds: 30,
    });
    const column = await call('create_column', {
      project_id: run.project_id,
      name: 'Upper',
      tool_id: 'formula',
      config_json: JSON.stringify({ expression: '$uppercase(Name)' }),
    });
    await call('run_pending_columns', { project_id: run.project_id, col_ids_json: JSON.stringify([column.col_id]), wait_seconds: 30 });
    const rows = await call('get_project_rows', { project_id: run.project_id, format: 'values' });
    expect((rows.rows as { values: Record<string, unknown> }[]).map((r) => r.values.Upper).sort()).toEqual(['ACME', 'GLOBEX', 'INITECH']);
    // And REST, from the API process, reads the same.
    expect((await t.api('GET', `/projects/${run.project_id}`)).body.row_count).toBe(3);
  });
});
