import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import type { SqlStorage } from '../../adapters/storage/sql-storage.ts';
import { runAdmin } from '../../doors/cli/admin.ts';
import { call, connect, data, rpc } from '../mcp/mcp-support.ts';
import { DIALECTS } from '../support/databases.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { allowAndExchange, FormBrowser, person, pkce, postForm } from './oauth-support.ts';

/**
 * The built-in OAuth 2.1 authorization server (docs/oauth.md) over real HTTP on both databases:
 * discovery, registration, the browser's sign-in and consent, codes, tokens, refresh rotation,
 * revocation, key rotation — and every refusal the RFCs name, with nothing issued.
 */

const REDIRECT = 'http://127.0.0.1:43123/oauth/callback';

describe.each(DIALECTS)('OAuth authorization server on %s', (dialect) => {
  let t: TestService;
  let origin: string;
  let mcpUrl: string;
  let alice: Awaited<ReturnType<typeof person>>;
  let aliceProject: string;
  /** One public client for the tests that only need one (registration is limited per address, as in production). */
  let agent: any;

  beforeAll(async () => {
    t = await startTestService(dialect, { MCP_PORT: '0' });
    origin = new URL(t.url).origin;
    mcpUrl = t.service.mcpUrl as string;
    alice = await person(t.service.kernel.storage, 'alice@example.com', t.workspaceId);
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' }, name: 'Alice project' },
    });
    aliceProject = made.body.project_id;
    agent = (await register()).body;
  });
  afterAll(() => t.stop());

  const register = async (metadata: Record<string, unknown> = {}) => {
    const res = await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Test Agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  const authorizeUrl = (clientId: string, challenge: string, extra: Record<string, string | null> = {}) => {
    const url = new URL(`${origin}/oauth/authorize`);
    const params: Record<string, string | null> = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: mcpUrl,
      scope: 'workflow',
      state: 'st-123',
      ...extra,
    };
    for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
    return url.href;
  };

  /** Sign-in, Allow and the code exchange for a registered client: the tokens it ends up with. */
  async function connected(who = alice, workspaceId?: string, client = agent, secret: Record<string, string> = {}) {
    const browser = new FormBrowser(origin);
    await browser.signIn(who.email, who.password);
    const exchanged = await allowAndExchange(browser, {
      clientId: client.client_id,
      redirectUri: REDIRECT,
      resource: mcpUrl,
      workspaceId,
      tokenFields: secret,
    });
    expect(exchanged.status).toBe(200);
    return { client, browser, tokens: exchanged.body, code: exchanged.code, verifier: exchanged.verifier };
  }

  const listProjects = async (accessToken: string, url = mcpUrl) => {
    const client = await connect(url, { authorization: `Bearer ${accessToken}` });
    try {
      return (await data(client, 'list_projects')).projects.map((p: any) => p.id);
    } finally {
      await client.close();
    }
  };

  const mcpStatus = async (accessToken: string) =>
    (await rpc(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${accessToken}` })).status;

  test('discovery: RFC 8414 metadata at the issuer, named by the MCP resource metadata, CORS open', async () => {
    const meta = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as any;
    expect(meta).toMatchObject({
      issuer: origin,
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      revocation_endpoint: `${origin}/oauth/revoke`,
      jwks_uri: `${origin}/oauth/jwks.json`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      response_types_supported: ['code'],
      client_id_metadata_document_supported: true,
    });
    // The resource is canonical without its slash, and both spellings point to the same metadata.
    expect(mcpUrl.endsWith('/mcp')).toBe(true);
    const prm = (await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', mcpUrl))).json()) as any;
    expect(prm.resource).toBe(mcpUrl);
    expect(prm.authorization_servers).toEqual([origin]);
    for (const url of [mcpUrl, `${mcpUrl}/`]) {
      const res = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain(
        `resource_metadata="${new URL(mcpUrl).origin}/.well-known/oauth-protected-resource/mcp"`,
      );
    }
    const preflight = await fetch(`${origin}/oauth/token`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const jwks = (await (await fetch(`${origin}/oauth/jwks.json`)).json()) as any;
    expect(Array.isArray(jwks.keys)).toBe(true);
  });

  test('the browser flow: sign-in first, a consent page, a code, tokens that reach the workspace at /mcp and /mcp/', async () => {
    const client = (await register()).body;
    expect(client.client_id).toMatch(/^wfc_/);
    expect(client.client_secret).toBeUndefined();
    const browser = new FormBrowser(origin);
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(client.client_id, challenge);
    // Not signed in: to the sign-in page, which comes back here.
    const first = await browser.get(url);
    expect(first.status).toBe(302);
    const login = new URL(first.headers.get('location') as string, origin);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('next')).toBe(url.slice(origin.length));
    await browser.signIn(alice.email, alice.password);
    const page = await (await browser.get(url)).text();
    expect(page).toContain('Connect Test Agent to Workflow Service?');
    expect(page).toContain('an application on this computer (127.0.0.1:43123)');
    expect(page).toContain('>Allow</button>');
    expect(page).toContain('>Deny</button>');
    const back = await browser.consent(url, 'allow');
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(origin);
    const tokens = await postForm(`${origin}/oauth/token`, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
      code_verifier: verifier,
      resource: mcpUrl,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.headers.get('cache-control')).toBe('no-store');
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'workflow' });
    expect(tokens.body.refresh_token).toMatch(/^wfr_/);
    const claims = decodeJwt(tokens.body.access_token);
    expect(decodeProtectedHeader(tokens.body.access_token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(claims).toMatchObject({
      iss: origin,
      aud: mcpUrl,
      sub: alice.user.id,
      workspace_id: t.workspaceId,
      client_id: client.client_id,
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect(await listProjects(tokens.body.access_token)).toEqual([aliceProject]);
    expect(await listProjects(tokens.body.access_token, `${mcpUrl}/`)).toEqual([aliceProject]);
  });

  test('refresh tokens rotate; a reused one revokes the whole family, access tokens included', async () => {
    const { client, tokens } = await connected();
    const refresh = (token: string) =>
      postForm(`${origin}/oauth/token`, { grant_type: 'refresh_token', refresh_token: token, client_id: client.client_id });
    const second = await refresh(tokens.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(await listProjects(second.body.access_token)).toEqual([aliceProject]);
    // The first refresh token again: a replay.
    const replay = await refresh(tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect(replay.body.access_token).toBeUndefined();
    // Everything of that family stops: the newest refresh token and both access tokens.
    expect((await refresh(second.body.refresh_token)).body.error).toBe('invalid_grant');
    expect(await mcpStatus(second.body.access_token)).toBe(401);
    expect(await mcpStatus(tokens.access_token)).toBe(401);
  });

  test('a code works once and for a minute; its replay revokes what it gave', async () => {
    const { client, tokens, code, verifier } = await connected();
    const again = await postForm(`${origin}/oauth/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
      code_verifier: verifier,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect(await mcpStatus(tokens.access_token)).toBe(401);

    // A code is stored to expire within 60 s; one past it is refused.
    const browser = new FormBrowser(origin);
    await browser.signIn(alice.email, alice.password);
    const pair = pkce();
    const back = await browser.consent(authorizeUrl(client.client_id, pair.challenge), 'allow');
    const { db } = (t.service.kernel.storage as unknown as SqlStorage).database;
    const stored = await db.selectFrom('oauth_codes').select(['expires_at']).where('used_at', 'is', null).execute();
    expect(stored.length).toBe(1);
    expect(Number(stored[0]?.expires_at) - Date.now()).toBeLessThanOrEqual(60_000);
    await db
      .updateTable('oauth_codes')
      .set({ expires_at: Date.now() - 1 })
      .where('used_at', 'is', null)
      .execute();
    const late = await postForm(`${origin}/oauth/token`, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
      code_verifier: pair.verifier,
    });
    expect(late.status).toBe(400);
    expect(late.body).toMatchObject({ error: 'invalid_grant' });
  });

  test('the token request must match its code: verifier, redirect URI, client and resource', async () => {
    const client = (await register()).body;
    const other = (await register()).body;
    const browser = new FormBrowser(origin);
    await browser.signIn(alice.email, alice.password);
    const exchange = async (fields: Record<string, string>) => {
      const pair = pkce();
      const back = await browser.consent(authorizeUrl(client.client_id, pair.challenge), 'allow');
      const base = {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') as string,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
        code_verifier: pair.verifier,
      };
      return postForm(`${origin}/oauth/token`, { ...base, ...fields });
    };
    expect((await exchange({ code_verifier: pkce().verifier })).body.error).toBe('invalid_grant');
    // A wrong verifier does not spend the code: someone holding a leaked code cannot burn it.
    const pair = pkce();
    const back = await browser.consent(authorizeUrl(client.client_id, pair.challenge), 'allow');
    const fields = {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: REDIRECT,
      client_id: client.client_id,
    };
    expect((await postForm(`${origin}/oauth/token`, { ...fields, code_verifier: pkce().verifier })).body.error).toBe('invalid_grant');
    expect((await postForm(`${origin}/oauth/token`, { ...fields, code_verifier: pair.verifier })).status).toBe(200);
    expect((await exchange({ redirect_uri: 'http://127.0.0.1:43123/other' })).body.error).toBe('invalid_grant');
    expect((await exchange({ client_id: other.client_id })).body.error).toBe('invalid_grant');
    const wrongResource = await exchange({ resource: 'http://127.0.0.1:1/elsewhere' });
    expect(wrongResource.status).toBe(400);
    expect(wrongResource.body.error).toBe('invalid_target');
    const noVerifier = await postForm(`${origin}/oauth/token`, {
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: REDIRECT,
      client_id: client.client_id,
    });
    expect(noVerifier.body.error).toBe('invalid_request');
    expect((await postForm(`${origin}/oauth/token`, { grant_type: 'password', client_id: client.client_id })).body.error).toBe(
      'unsupported_grant_type',
    );
    const unknown = await postForm(`${origin}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: 'wfr_nope',
      client_id: 'wfc_nobody',
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('invalid_client');
    const notForm = await fetch(`${origin}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(((await notForm.json()) as any).error).toBe('invalid_request');
  });

  test('authorization errors: a bad client or redirect URI is an error page, never a redirect; the rest go back to the client', async () => {
    const client = agent;
    const browser = new FormBrowser(origin);
    await browser.signIn(alice.email, alice.password);
    const { challenge } = pkce();
    for (const extra of <Record<string, string | null>[]>[
      { client_id: 'wfc_unknown' },
      { redirect_uri: 'https://evil.example/steal' },
      { redirect_uri: null },
    ]) {
      const res = await browser.get(authorizeUrl(client.client_id, challenge, extra));
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('This sign-in cannot continue');
    }
    // Before sign-in nothing is sent to the client, errors included: this site is no redirector for strangers.
    const anonymous = await new FormBrowser(origin).get(authorizeUrl(client.client_id, challenge, { code_challenge_method: 'plain' }));
    expect(anonymous.status).toBe(302);
    expect(new URL(anonymous.headers.get('location') as string, origin).pathname).toBe('/login');
    const redirected = async (extra: Record<string, string | null>) => {
      const res = await browser.get(authorizeUrl(client.client_id, challenge, extra));
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get('location') as string);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get('state')).toBe('st-123');
      expect(back.searchParams.get('code')).toBeNull();
      return back.searchParams.get('error');
    };
    expect(await redirected({ code_challenge: null })).toBe('invalid_request');
    expect(await redirected({ code_challenge_method: 'plain' })).toBe('invalid_request');
    expect(await redirected({ code_challenge_method: null })).toBe('invalid_request');
    expect(await redirected({ response_type: 'token' })).toBe('unsupported_response_type');
    expect(await redirected({ resource: 'https://elsewhere.example/mcp' })).toBe('invalid_target');
    expect(await redirected({ resource: null })).toBe('invalid_target');
    // A loopback redirect may name any port (RFC 8252 §7.3), the rest of it must match.
    const anyPort = await browser.get(authorizeUrl(client.client_id, challenge, { redirect_uri: 'http://127.0.0.1:50000/oauth/callback' }));
    expect(anyPort.status).toBe(200);
    const otherPath = await browser.get(authorizeUrl(client.client_id, challenge, { redirect_uri: 'http://127.0.0.1:43123/other' }));
    expect(otherPath.status).toBe(400);
  });

  test('Deny sends access_denied to the client and issues nothing; a forged consent is refused', async () => {
    const client = agent;
    const browser = new FormBrowser(origin);
    await browser.signIn(alice.email, alice.password);
    const back = await browser.consent(authorizeUrl(client.client_id, pkce().challenge), 'deny');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('code')).toBeNull();
    // An Allow posted without the page's CSRF token (another site's form) gets nothing.
    const url = new URL(authorizeUrl(client.client_id, pkce().challenge));
    const forged = await browser.post('/oauth/authorize', {
      ...Object.fromEntries(url.searchParams),
      decision: 'allow',
      workspace_id: t.workspaceId,
    });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
  });

  test('registration refuses what it cannot honour (RFC 7591 errors)', async () => {
    expect((await register({ redirect_uris: ['http://evil.example/cb'] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: ['javascript:alert(1)'] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ redirect_uris: [] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ grant_types: ['client_credentials'] })).body.error).toBe('invalid_client_metadata');
    expect((await register({ token_endpoint_auth_method: 'private_key_jwt' })).body.error).toBe('invalid_client_metadata');
    const native = await register({ redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback'] });
    expect(native.status).toBe(201);
    // application_type (OpenID Connect registration): honoured when given, else read from the redirects.
    expect(native.body.application_type).toBe('native');
    expect((await register({ redirect_uris: ['https://agent.example/cb'] })).body.application_type).toBe('web');
    const web = await register({ application_type: 'web', redirect_uris: ['http://127.0.0.1:8765/cb'] });
    expect(web.status).toBe(400);
    expect(web.body).toMatchObject({ error: 'invalid_redirect_uri', error_description: expect.stringContaining('"native"') });
    expect((await register({ application_type: 'web', redirect_uris: ['https://localhost/cb'] })).body.error).toBe('invalid_redirect_uri');
    expect((await register({ application_type: 'native', redirect_uris: ['http://127.0.0.1:8765/cb'] })).body.application_type).toBe(
      'native',
    );
    expect((await register({ application_type: 'desktop' })).body.error).toBe('invalid_client_metadata');
  });

  test('a URL client_id reads its Client ID Metadata Document (fetched under the network policy)', async () => {
    const documents = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(request) {
        const url = new URL(request.url);
        const id = url.href;
        if (url.pathname !== '/impostor.json')
          return Response.json({ client_id: id, client_name: 'Documented Agent', redirect_uris: [REDIRECT] });
        return Response.json({ client_id: 'https://someone.else/client.json', client_name: 'Impostor', redirect_uris: [REDIRECT] });
      },
    });
    const before = process.env.ALLOW_PRIVATE_NETWORK;
    try {
      const good = `http://127.0.0.1:${documents.port}/good.json`;
      const browser = new FormBrowser(origin);
      await browser.signIn(alice.email, alice.password);
      // This server reaches loopback addresses only where ALLOW_PRIVATE_NETWORK opens them.
      delete process.env.ALLOW_PRIVATE_NETWORK;
      // (Another document than the one read below: one that could not be read is not asked for again for a minute.)
      const closed = await browser.get(authorizeUrl(`http://127.0.0.1:${documents.port}/closed.json`, pkce().challenge));
      expect(closed.status).toBe(400);
      process.env.ALLOW_PRIVATE_NETWORK = '1';
      const pair = pkce();
      expect(await (await browser.get(authorizeUrl(good, pair.challenge))).text()).toContain('Connect Documented Agent');
      const back = await browser.consent(authorizeUrl(good, pair.challenge), 'allow');
      const tokens = await postForm(`${origin}/oauth/token`, {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') as string,
        redirect_uri: REDIRECT,
        client_id: good,
        code_verifier: pair.verifier,
      });
      expect(tokens.status).toBe(200);
      expect(decodeJwt(tokens.body.access_token).client_id).toBe(good);
      // A document that names another client_id is not this client's.
      const impostor = await browser.get(authorizeUrl(`http://127.0.0.1:${documents.port}/impostor.json`, pkce().challenge));
      expect(impostor.status).toBe(400);
      expect(await impostor.text()).toContain('names another client_id');
    } finally {
      if (before === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
      else process.env.ALLOW_PRIVATE_NETWORK = before;
      documents.stop(true);
    }
  });

  test('a URL client_id is fetched only after sign-in, never echoed, and only so often per address', async () => {
    const fetched: string[] = [];
    const documents = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(request) {
        fetched.push(new URL(request.url).pathname);
        return new Response('SECRET-INTRANET-CONTENT <html>', { headers: { 'content-type': 'text/html' } });
      },
    });
    const before = process.env.ALLOW_PRIVATE_NETWORK;
    process.env.ALLOW_PRIVATE_NETWORK = '1';
    try {
      const doc = (n: number) => `http://127.0.0.1:${documents.port}/doc-${n}.json`;
      // Anonymous: sent to sign in, and nothing is fetched.
      for (let i = 0; i < 5; i++) {
        const anonymous = await fetch(authorizeUrl(doc(i), pkce().challenge), { redirect: 'manual' });
        expect(anonymous.status).toBe(302);
        expect(anonymous.headers.get('location')).toStartWith('/login?next=');
      }
      expect(fetched).toEqual([]);
      // Signed in: fetched, and what it answered is not shown.
      const browser = new FormBrowser(origin);
      await browser.signIn(alice.email, alice.password);
      const page = await browser.get(authorizeUrl(doc(100), pkce().challenge));
      expect(page.status).toBe(400);
      const text = await page.text();
      expect(text).toContain('it is not JSON');
      expect(text).not.toContain('SECRET-INTRANET-CONTENT');
      // At most ten such authorizations at once per address, then a 429 without a fetch.
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await browser.get(authorizeUrl(doc(200 + i), pkce().challenge))).status);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
      expect(fetched.length).toBeLessThanOrEqual(10);
    } finally {
      if (before === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
      else process.env.ALLOW_PRIVATE_NETWORK = before;
      documents.stop(true);
    }
  });

  test('a confidential client authenticates with its secret (Basic or in the form)', async () => {
    const client = (await register({ token_endpoint_auth_method: 'client_secret_basic' })).body;
    expect(client.client_secret).toMatch(/^wfcs_/);
    const { tokens } = await connected(alice, undefined, client, { client_secret: client.client_secret });
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token };
    const without = await postForm(`${origin}/oauth/token`, { ...refresh, client_id: client.client_id });
    expect(without.status).toBe(401);
    expect(without.body.error).toBe('invalid_client');
    const wrong = await postForm(`${origin}/oauth/token`, { ...refresh, client_id: client.client_id, client_secret: 'wfcs_wrong' });
    expect(wrong.body.error).toBe('invalid_client');
    const malformed = await postForm(`${origin}/oauth/token`, refresh, {
      authorization: `Basic ${Buffer.from('%zz:%zz').toString('base64')}`,
    });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error).toBe('invalid_client');
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const ok = await postForm(`${origin}/oauth/token`, refresh, { authorization: basic });
    expect(ok.status).toBe(200);
    expect(ok.body.refresh_token).not.toBe(tokens.refresh_token);
  });

  test('a person of two workspaces grants one and sees only its projects', async () => {
    const other = await t.newWorkspace();
    const bob = await person(t.service.kernel.storage, 'bob@example.com', t.workspaceId);
    await t.service.kernel.storage.users.setRole(other.workspaceId, bob.user.id, 'member');
    const otherProject = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Other' }, name: 'Other project' },
      headers: { 'service-api-key': other.key },
    });
    const client = agent;
    const browser = new FormBrowser(origin);
    await browser.signIn(bob.email, bob.password);
    const page = await (await browser.get(authorizeUrl(client.client_id, pkce().challenge))).text();
    expect(page).toContain('<select id="workspace_id" name="workspace_id">');
    expect(page).toContain(`value="${other.workspaceId}"`);
    const { tokens } = await connected(bob, other.workspaceId);
    expect(decodeJwt(tokens.access_token).workspace_id).toBe(other.workspaceId);
    expect(await listProjects(tokens.access_token)).toEqual([otherProject.body.project_id]);
    // A workspace the person is not in cannot be chosen.
    const stranger = new FormBrowser(origin);
    await stranger.signIn(alice.email, alice.password);
    await expect(stranger.consent(authorizeUrl(client.client_id, pkce().challenge), 'allow', other.workspaceId)).rejects.toThrow(/400/);
  });

  test('revocation (RFC 7009), Settings → Connected apps, and leaving the workspace stop a client', async () => {
    const a = await connected(alice, undefined, (await register({ client_name: 'Agent A' })).body);
    expect((await postForm(`${origin}/oauth/revoke`, { token: a.tokens.refresh_token, client_id: a.client.client_id })).status).toBe(200);
    expect(await mcpStatus(a.tokens.access_token)).toBe(401);
    // Unknown tokens are answered the same.
    expect((await postForm(`${origin}/oauth/revoke`, { token: 'wfr_unknown', client_id: a.client.client_id })).status).toBe(200);

    const b = await connected(alice, undefined, (await register({ client_name: 'Agent B' })).body);
    const session = (await (await b.browser.get(`${origin}/session`)).json()) as any;
    const list = (await (await b.browser.get(`${origin}/account/connections`)).json()) as any;
    const mine = list.connections.find((c: any) => c.client_id === b.client.client_id);
    expect(mine).toMatchObject({ client_name: 'Agent B', scope: 'workflow', resource: mcpUrl });
    expect(list.connections.some((c: any) => c.client_id === a.client.client_id)).toBe(false);
    const revoke = await fetch(`${origin}/account/connections/${mine.id}`, {
      method: 'DELETE',
      headers: { cookie: b.browser.cookie, 'x-csrf-token': session.csrf_token },
    });
    expect(revoke.status).toBe(204);
    expect(await mcpStatus(b.tokens.access_token)).toBe(401);
    const refreshed = await postForm(`${origin}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: b.tokens.refresh_token,
      client_id: b.client.client_id,
    });
    expect(refreshed.body.error).toBe('invalid_grant');

    const carol = await person(t.service.kernel.storage, 'carol@example.com', t.workspaceId);
    const c = await connected(carol);
    expect(await mcpStatus(c.tokens.access_token)).toBe(200);
    await t.service.kernel.storage.users.removeMember(t.workspaceId, carol.user.id);
    const again = await postForm(`${origin}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: c.tokens.refresh_token,
      client_id: c.client.client_id,
    });
    expect(again.body.error).toBe('invalid_grant');
  });

  test('oauth:rotate-keys: new tokens carry the new key at once, tokens of the old key still work', async () => {
    const before = await connected();
    const oldKid = decodeProtectedHeader(before.tokens.access_token).kid;
    const rotated = (await runAdmin(['oauth:rotate-keys'], t.service.kernel.storage)) as any;
    expect(rotated.retired).toContain(oldKid);
    const after = await connected();
    expect(decodeProtectedHeader(after.tokens.access_token).kid).toBe(rotated.kid);
    expect(await listProjects(after.tokens.access_token)).toEqual([aliceProject]);
    expect(await listProjects(before.tokens.access_token)).toEqual([aliceProject]);
    const kids = ((await (await fetch(`${origin}/oauth/jwks.json`)).json()) as any).keys.map((k: any) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([oldKid, rotated.kid]));
  });

  test('a forged or foreign token is refused with invalid_token', async () => {
    const { tokens } = await connected();
    const [header, payload] = tokens.access_token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, workspace_id: 'someone-else' })).toString('base64url')}.${tokens.access_token.split('.')[2]}`;
    const res = await rpc(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${tampered}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // Algorithm confusion: the same claims signed HS256 with the published public key are refused (401, not 500).
    const jwk = (await (await fetch(`${origin}/oauth/jwks.json`)).json()).keys[0];
    const headerJson = JSON.parse(Buffer.from(header, 'base64url').toString());
    const confused = await new SignJWT(claims)
      .setProtectedHeader({ ...headerJson, alg: 'HS256' })
      .sign(new TextEncoder().encode(JSON.stringify(jwk)));
    const refused = await rpc(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${confused}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const envelope = await call(await connect(mcpUrl, { authorization: `Bearer ${tokens.access_token}` }), 'get_project', {
      project_id: aliceProject,
    });
    expect(envelope.ok).toBe(true);
  });
});
