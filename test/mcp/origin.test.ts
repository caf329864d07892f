import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../../core/config.ts';
import { originGuard } from '../../doors/mcp/origin-guard.ts';
import { mcpUrls } from '../../core/identity/oauth/resource-urls.ts';
import { connect, data, type McpTestService, rpc, startMcpTestService } from './mcp-support.ts';

/**
 * DNS-rebinding protection (docs/api.md, MCP 2025-11-25): a browser page from a foreign
 * origin, or a request under a foreign Host while the server listens on loopback, is refused with
 * 403 before anything else. Transport only, so SQLite is enough.
 */

const APP = 'https://app.example.com';
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-test', version: '1.0.0' } },
};
const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

describe('Origin and Host checks of the MCP endpoint', () => {
  let t: McpTestService;
  let port: string;
  const withKey = (headers: Record<string, string> = {}) => ({ 'service-api-key': t.key, ...headers });
  beforeAll(async () => {
    t = await startMcpTestService('sqlite', { MCP_ALLOWED_ORIGINS: `${APP}/, https://other.example.com` });
    port = new URL(t.mcpUrl).port;
  });
  afterAll(() => t.stop());

  test('a foreign Origin is 403 with a JSON-RPC error saying what to set, key or no key', async () => {
    for (const headers of [withKey({ origin: 'http://evil.example' }), { origin: 'http://evil.example' }]) {
      const res = await rpc(t.mcpUrl, initialize, headers);
      expect(res.status).toBe(403);
      const body = await res.json();
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
      expect(body.error.message).toContain('Origin "http://evil.example" may not call this MCP server');
      expect(body.error.message).toContain('MCP_ALLOWED_ORIGINS');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  test('the opaque Origin "null" (sandboxed frames, files) and a foreign port of our own host are refused', async () => {
    for (const origin of ['null', `http://127.0.0.1:${Number(port) + 1}`, 'http://127.0.0.1.evil.example']) {
      expect((await rpc(t.mcpUrl, listTools, withKey({ origin }))).status).toBe(403);
    }
  });

  test('no Origin (every non-browser client), our own origin under each loopback name, and allowed origins pass', async () => {
    expect((await rpc(t.mcpUrl, listTools, withKey())).status).toBe(200);
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      `http://[::1]:${port}`,
      APP,
      'https://OTHER.example.com:443',
    ]) {
      const res = await rpc(t.mcpUrl, listTools, withKey({ origin }));
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 });
      expect((await res.json()).result.tools.length).toBeGreaterThan(20);
    }
  });

  test('a foreign Host while listening on loopback is 403, naming MCP_RESOURCE_URL', async () => {
    const res = await rpc(t.mcpUrl, initialize, withKey({ host: `evil.example:${port}` }));
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body.error.message).toContain(`Host "evil.example:${port}" is not a name of this MCP server`);
    expect(body.error.message).toContain('MCP_RESOURCE_URL');
    // The same address under another port is no name of ours either.
    expect((await rpc(t.mcpUrl, listTools, withKey({ host: '127.0.0.1:1' }))).status).toBe(403);
  });

  test('each loopback name with our port is our Host', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      expect({ host, status: (await rpc(t.mcpUrl, listTools, withKey({ host }))).status }).toEqual({ host, status: 200 });
    }
  });

  test('an allowed origin gets CORS: a preflight without credentials, then the answer with its headers', async () => {
    const preflight = await fetch(t.mcpUrl, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'service-api-key, content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('service-api-key');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    const res = await rpc(t.mcpUrl, listTools, withKey({ origin: APP }));
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
    expect(res.headers.get('vary')).toContain('Origin');
    // Our own origin is not cross-origin: no CORS headers.
    expect(
      (await rpc(t.mcpUrl, listTools, withKey({ origin: `http://127.0.0.1:${port}` }))).headers.get('access-control-allow-origin'),
    ).toBeNull();
  });

  test('the SDK client (no Origin) works as before, and nothing but /mcp/ is guarded', async () => {
    const client = await connect(t.mcpUrl, withKey());
    try {
      expect(Array.isArray(await data(client, 'list_builders'))).toBe(true);
    } finally {
      await client.close();
    }
    const health = await fetch(new URL('/health', t.mcpUrl), { headers: { origin: 'http://evil.example' } });
    expect(health.status).toBe(200);
  });
});

describe('which origins and hosts are the MCP host’s own', () => {
  const guard = (env: Record<string, string>, port = 3001) => {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', ...env });
    return originGuard(config, mcpUrls(config, port));
  };
  const status = (g: ReturnType<typeof guard>, headers: Record<string, string>) =>
    g.refusal(new Request('http://127.0.0.1:3001/mcp/', { method: 'POST', headers }))?.status ?? 200;

  test('behind a proxy, MCP_RESOURCE_URL names the public Host and origin', () => {
    const g = guard({ MCP_RESOURCE_URL: 'https://mcp.example.com/mcp/' });
    expect(status(g, { host: 'mcp.example.com', origin: 'https://mcp.example.com' })).toBe(200);
    expect(status(g, { host: '127.0.0.1:3001', origin: 'https://mcp.example.com' })).toBe(200);
    expect(status(g, { host: 'mcp.example.com', origin: 'http://mcp.example.com' })).toBe(403);
    expect(status(g, { host: 'evil.example.com' })).toBe(403);
  });

  test('bound beyond loopback, any Host is taken (a load balancer’s name), Origin still checked', () => {
    const g = guard({ HOST: '0.0.0.0' });
    expect(status(g, { host: 'mcp.internal:3001' })).toBe(200);
    expect(status(g, { host: 'mcp.internal:3001', origin: 'http://mcp.internal:3001' })).toBe(403);
    expect(
      status(guard({ HOST: '0.0.0.0', MCP_ALLOWED_ORIGINS: 'http://mcp.internal:3001' }), { origin: 'http://mcp.internal:3001' }),
    ).toBe(200);
  });

  test('MCP_ALLOWED_ORIGINS=* lets every origin in; the loopback Host check stays', () => {
    const g = guard({ MCP_ALLOWED_ORIGINS: '*' });
    expect(status(g, { host: '127.0.0.1:3001', origin: 'http://anything.example' })).toBe(200);
    expect(status(g, { host: 'evil.example:3001', origin: 'http://anything.example' })).toBe(403);
  });
});
