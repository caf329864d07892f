import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { captureLog } from './support/capture-log.ts';
import { DIALECTS } from './support/databases.ts';
import { enc, startTestService, type TestService } from './support/test-service.ts';
import { rpc } from './mcp/mcp-support.ts';

const BOOT_KEY = 'my-bootstrap-secret-for-logs';
const FILTER_SECRET = 'needle-in-the-filter';

/** Runs `fn` with the log at info level and answers the access-log lines it wrote. */
async function accessLines(fn: () => Promise<void>): Promise<{ lines: any[]; text: string }> {
  const { text, lines } = await captureLog(fn);
  return { text, lines: lines.filter((l) => l.msg === 'request') };
}

describe.each(DIALECTS)('access log and request ids on %s', (dialect) => {
  let t: TestService;
  let origin: string;
  let pid: string;
  beforeAll(async () => {
    t = await startTestService(dialect, { BOOTSTRAP_API_KEY: BOOT_KEY, MCP_PORT: '0' });
    origin = new URL(t.url).origin;
    const r = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme\nglobex.example.com' } },
    });
    expect(r.status).toBe(201);
    pid = r.body.project_id;
  }, 60_000);
  afterAll(() => t.stop());

  test('one line per REST request: method, route template, status, ms, key prefix, workspace, request id; never the key or the query', async () => {
    const base = new URL(t.url).pathname;
    const filter = enc([{ type: 'and', rules: [{ col_id: 'nope', operator: 'contains', value: FILTER_SECRET }] }]);
    const answers: Response[] = [];
    const { lines, text } = await accessLines(async () => {
      answers.push(await fetch(`${t.url}/projects/${pid}/rows?page_size=5`, { headers: { 'service-api-key': t.key } }));
      answers.push(await fetch(`${t.url}/projects/${pid}/rows?filter_groups=${filter}`, { headers: { 'service-api-key': t.key } }));
      answers.push(await fetch(`${t.url}/projects`, { headers: { 'service-api-key': BOOT_KEY } }));
      answers.push(await fetch(`${t.url}/projects`, { headers: { 'service-api-key': 'wfs_deadbeef_not-a-real-secret' } }));
      answers.push(await fetch(`${t.url}/projects`, { headers: { 'service-api-key': 'some-other-secret-string' } }));
      answers.push(await fetch(`${t.url}/no/such/route?token=abc`, { headers: { 'service-api-key': t.key } }));
      answers.push(await fetch(`${origin}/metrics`));
    });
    expect(answers.map((a) => a.status)).toEqual([200, 422, 200, 401, 401, 404, 200]);
    expect(lines).toHaveLength(answers.length);
    const keyPrefix = t.key.slice(0, 12);
    expect(lines.map((l) => [l.method, l.route, l.status, l.key_prefix, l.workspace_id])).toEqual([
      ['GET', `${base}/projects/{project_id}/rows`, 200, keyPrefix, t.workspaceId],
      ['GET', `${base}/projects/{project_id}/rows`, 422, keyPrefix, t.workspaceId],
      ['GET', `${base}/projects`, 200, expect.stringMatching(/^boot_[0-9a-f]{8}$/), expect.any(String)],
      ['GET', `${base}/projects`, 401, 'wfs_deadbeef', null],
      ['GET', `${base}/projects`, 401, null, null],
      ['GET', `${base}/no/such/route`, 404, null, null],
      ['GET', '/metrics', 200, null, null],
    ]);
    for (const [i, line] of lines.entries()) {
      expect(Object.keys(line).sort()).toEqual(
        ['key_prefix', 'level', 'method', 'ms', 'msg', 'request_id', 'route', 'status', 'time', 'workspace_id'].sort(),
      );
      expect(line.ms).toBeGreaterThanOrEqual(0);
      expect(line.request_id).toBe(answers[i]?.headers.get('x-request-id'));
    }
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(lines.length);
    for (const secret of [t.key.slice(13), BOOT_KEY, 'not-a-real-secret', 'some-other-secret-string', FILTER_SECRET, 'token=abc']) {
      expect(text).not.toContain(secret);
    }
    // The route is the template: no project id, no query string.
    expect(JSON.stringify(lines)).not.toContain(pid);
    expect(lines.some((l) => l.route.includes('?'))).toBe(false);
  });

  test('a sane incoming x-request-id is kept; anything else gets a fresh one', async () => {
    const { lines } = await accessLines(async () => {
      const kept = await fetch(`${t.url}/projects`, { headers: { 'service-api-key': t.key, 'x-request-id': 'trace-42.a:b_c' } });
      expect(kept.headers.get('x-request-id')).toBe('trace-42.a:b_c');
      for (const insane of ['has spaces in it', 'x'.repeat(65), '{"json":1}']) {
        const res = await fetch(`${t.url}/projects`, { headers: { 'service-api-key': t.key, 'x-request-id': insane } });
        expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      }
    });
    expect(lines.map((l) => l.request_id)[0]).toBe('trace-42.a:b_c');
    expect(lines).toHaveLength(4);
  });

  test('one line per MCP HTTP request, with the key prefix and workspace, never the key', async () => {
    const mcpUrl = t.service.mcpUrl as string;
    const answers: Response[] = [];
    const { lines, text } = await accessLines(async () => {
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } };
      answers.push(await rpc(mcpUrl, call, { 'service-api-key': t.key }));
      answers.push(await rpc(mcpUrl, call, { authorization: `Bearer ${t.key}` }));
      answers.push(await rpc(mcpUrl, call, { 'service-api-key': 'wfs_0badc0de_nope-nope' }));
      answers.push(await fetch(new URL('/health', mcpUrl)));
    });
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 200]);
    const keyPrefix = t.key.slice(0, 12);
    const path = new URL(mcpUrl).pathname;
    expect(lines.map((l) => [l.method, l.route, l.status, l.key_prefix, l.workspace_id])).toEqual([
      ['POST', path, 200, keyPrefix, t.workspaceId],
      ['POST', path, 200, keyPrefix, t.workspaceId],
      ['POST', path, 401, 'wfs_0badc0de', null],
      ['GET', '/health', 200, null, null],
    ]);
    for (const [i, line] of lines.entries()) expect(line.request_id).toBe(answers[i]?.headers.get('x-request-id'));
    for (const secret of [t.key.slice(13), 'nope-nope']) expect(text).not.toContain(secret);
  });
});
