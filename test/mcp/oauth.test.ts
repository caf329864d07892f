import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { runAdmin } from '../../doors/cli/admin.ts';
import { DIALECTS } from '../support/databases.ts';
import { type TestIssuer, startTestIssuer } from './jwks-server.ts';
import { call, connect, data, type McpTestService, rpc, startMcpTestService } from './mcp-support.ts';

const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe.each(DIALECTS)('MCP OAuth bearer tokens on %s', (dialect) => {
  let issuer: TestIssuer;
  let t: McpTestService;
  let projectId: string;
  beforeAll(async () => {
    issuer = await startTestIssuer();
    t = await startMcpTestService(dialect, { OAUTH_ISSUER: issuer.issuer });
    const r = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' }, name: 'OAuth project' },
    });
    projectId = r.body.project_id;
  });
  afterAll(async () => {
    await t.stop();
    issuer.stop();
  });

  const bearer = async (token: string) => connect(t.mcpUrl, { authorization: `Bearer ${token}` });

  test('the metadata names this server as the resource and the issuer as its authorization server', async () => {
    const meta = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', t.mcpUrl))).json();
    expect(meta).toEqual({
      resource: t.mcpUrl,
      // The built-in issuer first (the REST host), then OAUTH_ISSUER: tokens of both are accepted.
      authorization_servers: [new URL(t.url).origin, issuer.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['workflow'],
      resource_name: 'Workflow Service MCP',
    });
  });

  test('a valid token with a workspace_id claim reaches that workspace', async () => {
    const token = await issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: t.workspaceId, scope: 'workflow' });
    const client = await bearer(token);
    try {
      const projects = await data(client, 'list_projects');
      expect(projects.projects.map((p: any) => p.id)).toEqual([projectId]);
    } finally {
      await client.close();
    }
  });

  test('a token without the claim reaches the workspace its subject was linked to (admin oauth:link)', async () => {
    const token = await issuer.sign({ sub: 'bob@example.com', aud: t.mcpUrl.replace(/\/$/, '') });
    const client = await bearer(token);
    try {
      const before = await call(client, 'list_projects');
      expect(before).toMatchObject({ ok: false, code: 'forbidden', status_code: 403 });
      expect(before.detail.message).toContain('oauth:link');
      const linked = await runAdmin(
        ['oauth:link', '--workspace', t.workspaceId, '--subject', 'bob@example.com', '--issuer', issuer.issuer],
        t.service.kernel.storage,
      );
      expect(linked).toEqual({ workspace_id: t.workspaceId, issuer: issuer.issuer, subject: 'bob@example.com', linked: true });
      expect((await data(client, 'get_project', { project_id: projectId })).id).toBe(projectId);
    } finally {
      await client.close();
    }
  });

  test('a token for a workspace on a plan without API access gets forbidden envelopes', async () => {
    const free = await t.newWorkspace('free');
    const client = await bearer(await issuer.sign({ sub: 'carol', aud: t.mcpUrl, workspace_id: free.workspaceId }));
    try {
      expect(await call(client, 'list_projects')).toMatchObject({ code: 'forbidden', status_code: 403 });
    } finally {
      await client.close();
    }
  });

  const refused: [string, () => Promise<string>][] = [
    [
      'an expired token',
      () => issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: t.workspaceId, exp: Math.floor(Date.now() / 1000) - 120 }),
    ],
    ['a token for another audience', () => issuer.sign({ sub: 'alice', aud: 'https://other.example/mcp/', workspace_id: t.workspaceId })],
    ['a token with no audience', () => issuer.sign({ sub: 'alice', workspace_id: t.workspaceId })],
    [
      'a token from another issuer',
      () => issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: t.workspaceId, iss: 'https://evil.example' }),
    ],
    [
      'a token signed by a key not in the JWKS',
      () => issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: t.workspaceId }, { foreignKey: true }),
    ],
    [
      'a token naming a workspace that does not exist',
      () => issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: 'no-such-workspace' }),
    ],
    ['a token without expiry', async () => await issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: t.workspaceId, exp: undefined })],
  ];
  for (const [what, token] of refused) {
    test(`${what}: HTTP 401 invalid_token with the metadata pointer`, async () => {
      const res = await rpc(t.mcpUrl, listTools, { authorization: `Bearer ${await token()}` });
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate') as string;
      expect(challenge).toContain('resource_metadata="');
      expect(challenge).toContain('error="invalid_token"');
      expect(await res.json()).toMatchObject({ ok: false, code: 'unauthorized', status_code: 401 });
    });
  }
});

test('without OAUTH_ISSUER a foreign bearer JWT is refused with 401 and the metadata lists the built-in issuer alone', async () => {
  const issuer = await startTestIssuer();
  const t = await startMcpTestService('sqlite');
  try {
    const token = await issuer.sign({ sub: 'alice', aud: t.mcpUrl, workspace_id: t.workspaceId });
    const res = await rpc(t.mcpUrl, listTools, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(401);
    expect((await res.json()).detail.message).toContain('OAUTH_ISSUER');
    const meta = await (await fetch(new URL('/.well-known/oauth-protected-resource', t.mcpUrl))).json();
    expect(meta.authorization_servers).toEqual([new URL(t.url).origin]);
  } finally {
    await t.stop();
    issuer.stop();
  }
});
