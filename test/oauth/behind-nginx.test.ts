import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeProtectedHeader } from 'jose';
import { type Cluster, startCluster } from '../../scripts/cluster/cluster.ts';
import { admin } from '../support/admin-cli.ts';
import { connectAgent, FormBrowser } from './oauth-support.ts';

/**
 * Browser sign-in as production runs it (README "Production deployment"): nginx in front of an API
 * process (the authorization server, PUBLIC_URL its issuer) and a separate MCP process on MariaDB +
 * Redis. The MCP process verifies tokens another process issued, against the stored keys; it takes
 * a key rotated by the admin CLI at once, and stops a disconnected client within a minute.
 */

const PERSON = { email: 'ops@example.com', password: 'correct horse battery staple' };

describe('OAuth behind nginx, API and MCP in separate processes', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster({ apis: 1, mcps: 1, workers: 0 });
    const made = await admin(cluster.databaseUrl, 'user:create', '--email', PERSON.email, '--password', PERSON.password);
    expect(made.code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  const status = async (accessToken: string) =>
    (
      await fetch(cluster.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    ).status;

  test('discovery through nginx names the public URL as issuer and /mcp as the resource', async () => {
    const challenge = (await fetch(cluster.mcpUrl, { method: 'POST' })).headers.get('www-authenticate') as string;
    expect(challenge).toContain(`resource_metadata="${cluster.origin}/.well-known/oauth-protected-resource/mcp"`);
    const prm = (await (await fetch(`${cluster.origin}/.well-known/oauth-protected-resource/mcp`)).json()) as any;
    expect(prm).toMatchObject({ resource: cluster.mcpUrl, authorization_servers: [cluster.origin] });
    const meta = (await (await fetch(`${cluster.origin}/.well-known/oauth-authorization-server`)).json()) as any;
    expect(meta.issuer).toBe(cluster.origin);
    expect(meta.token_endpoint).toBe(`${cluster.origin}/oauth/token`);
  });

  test('a token issued by the API process works on the MCP process, at /mcp and /mcp/', async () => {
    const { tokens } = await connectAgent(cluster.origin, cluster.mcpUrl, PERSON, 'Cluster Agent');
    for (const url of [cluster.mcpUrl, `${cluster.mcpUrl}/`]) {
      const client = new Client({ name: 'cluster-agent', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } } }),
      );
      const result = (await client.callTool({ name: 'get_credits', arguments: {} })) as any;
      expect(result.structuredContent).toMatchObject({ ok: true, data: { balance: 1000 } });
      await client.close();
    }
  });

  test('a key rotated by the admin CLI signs the next token, which the MCP process accepts at once; old tokens keep working', async () => {
    const before = await connectAgent(cluster.origin, cluster.mcpUrl, PERSON, 'Before rotation');
    expect(await status(before.tokens.access_token)).toBe(200);
    const rotated = await admin(cluster.databaseUrl, 'oauth:rotate-keys');
    expect(rotated.code).toBe(0);
    const after = await connectAgent(cluster.origin, cluster.mcpUrl, PERSON, 'After rotation');
    expect(decodeProtectedHeader(after.tokens.access_token).kid).toBe(rotated.out.kid);
    expect(await status(after.tokens.access_token)).toBe(200);
    expect(await status(before.tokens.access_token)).toBe(200);
  });

  test('disconnecting in the console (API process) stops the token on the MCP process within 15 s', async () => {
    const { tokens, client } = await connectAgent(cluster.origin, cluster.mcpUrl, PERSON, 'To disconnect');
    expect(await status(tokens.access_token)).toBe(200);
    const browser = new FormBrowser(cluster.origin);
    await browser.signIn(PERSON.email, PERSON.password);
    const session = (await (await browser.get(`${cluster.origin}/session`)).json()) as any;
    const list = (await (await browser.get(`${cluster.origin}/account/connections`)).json()) as any;
    const grant = list.connections.find((c: any) => c.client_id === client.client_id);
    const removed = await fetch(`${cluster.origin}/account/connections/${grant.id}`, {
      method: 'DELETE',
      headers: { cookie: browser.cookie, 'x-csrf-token': session.csrf_token, origin: cluster.origin },
    });
    expect(removed.status).toBe(204);
    const revokedAt = Date.now();
    while ((await status(tokens.access_token)) !== 401) {
      if (Date.now() - revokedAt > 60_000)
        throw new Error('the MCP process still accepts the token a minute after its revocation (it should stop within 15 s)');
      await Bun.sleep(500);
    }
    // Each process trusts a live grant for 15 s at most.
    expect(Date.now() - revokedAt).toBeLessThan(16_000);
  }, 90_000);
});
