import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { freePort } from '../support/free-port.ts';
import { type McpTestService, startMcpTestService } from '../mcp/mcp-support.ts';
import { person, postForm } from './oauth-support.ts';
import { callbackServer, signInAndDecide } from './browser-sign-in.ts';

/**
 * Real MCP clients against the real endpoint with browser sign-in (docs/oauth.md): `mcp-remote` (the
 * proxy MCP-native desktop clients run) and the MCP SDK client's OAuth provider, each discovering
 * the authorization server, registering itself, and handing the person a URL that Chromium then
 * plays through sign-in and consent. Access tokens last 4 s here, so that expiry and refresh happen.
 */

const CHROMIUM = '/usr/bin/chromium';
const MCP_REMOTE = resolve(import.meta.dir, '../../node_modules/mcp-remote/dist/proxy.js');
const TOKEN_SECONDS = 4;

/** An OAuthClientProvider kept in memory, as an application would keep it on disk. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens[] = [];
  verifier = '';
  discovery: unknown;
  /** Each authorization URL the client asked the person to open. */
  opened: URL[] = [];

  constructor(
    readonly redirectUrl: string,
    readonly overrides: Partial<OAuthClientProvider> = {},
  ) {
    Object.assign(this, overrides);
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test agent',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation = () => this.info;
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens = () => this.saved.at(-1);
  saveTokens = (tokens: OAuthTokens) => void this.saved.push(tokens);
  redirectToAuthorization = (url: URL) => void this.opened.push(url);
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier = () => this.verifier;
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  /** What the SDK forgets after invalid_grant ('tokens') or invalid_client ('all'). */
  invalidateCredentials = (scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') => {
    if (scope === 'all' || scope === 'tokens') this.saved = [];
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  };
  discoveryState = () => this.discovery as never;
}

describe('MCP-native clients sign in through the browser', () => {
  let browser: Browser;
  let t: McpTestService;
  let origin: string;
  let dana: Awaited<ReturnType<typeof person>>;
  /** Dana's project in the test workspace, and in her second workspace ("Side business"). */
  let mainProject: string;
  let sideProject: string;
  let sideWorkspace: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: these tests drive Debian's Chromium (scripts/setup-services.sh)`);
    t = await startMcpTestService('sqlite', { OAUTH_ACCESS_TOKEN_SECONDS: String(TOKEN_SECONDS) });
    origin = new URL(t.url).origin;
    const { storage } = t.service.kernel;
    dana = await person(storage, 'dana@example.com', t.workspaceId);
    const side = await storage.workspaces.create({ name: 'Side business', plan: 'pro' });
    sideWorkspace = side.id;
    await storage.users.setRole(side.id, dana.user.id, 'owner');
    const { issueApiKey } = await import('../../core/identity/api-keys.ts');
    const sideKey = (await issueApiKey(storage.workspaces, side.id)).api_key;
    const project = (name: string, key: string) =>
      t.api('POST', '/projects', {
        body: { builder_id: 'manual_list_builder', form_data: { companies: name }, name },
        headers: { 'service-api-key': key },
      });
    mainProject = (await project('Main', t.key)).body.project_id;
    sideProject = (await project('Side', sideKey)).body.project_id;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** A fresh browser profile: not signed in. */
  const freshPage = async (): Promise<[BrowserContext, Awaited<ReturnType<BrowserContext['newPage']>>]> => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return [context, page];
  };

  const projectIds = async (client: Client) => {
    const result = (await client.callTool({ name: 'list_projects', arguments: {} })) as { structuredContent?: any };
    return result.structuredContent.data.projects.map((p: any) => p.id);
  };

  test('mcp-remote: discovery, registration, browser sign-in with Allow, then tools/list and a tool call', async () => {
    const home = mkdtempSync(join(tmpdir(), 'mcp-remote-'));
    // The "browser" mcp-remote opens: xdg-open hands the URL to $BROWSER, which writes it down for Chromium to visit.
    const opened = join(home, 'opened-urls');
    const opener = join(home, 'browser.sh');
    writeFileSync(opener, `#!/bin/sh\necho "$1" >> '${opened}'\n`);
    chmodSync(opener, 0o755);
    const transport = new StdioClientTransport({
      command: 'node',
      args: [MCP_REMOTE, t.mcpUrl, String(await freePort()), '--host', '127.0.0.1'],
      env: { PATH: process.env.PATH ?? '', HOME: home, MCP_REMOTE_CONFIG_DIR: join(home, 'auth'), BROWSER: opener },
      stderr: 'pipe',
    });
    let log = '';
    transport.stderr?.on('data', (chunk) => {
      log += String(chunk);
    });
    const client = new Client({ name: 'desktop-app', version: '1.0.0' });
    const connecting = client.connect(transport, { timeout: 60_000 });
    try {
      // mcp-remote prints the URL and opens it; the person signs in and allows, in Chromium.
      let url: string | undefined;
      for (let i = 0; i < 300 && !url; i++) {
        await Bun.sleep(100);
        url = existsSync(opened) ? readFileSync(opened, 'utf8').trim().split('\n')[0] : undefined;
      }
      if (!url) throw new Error(`mcp-remote opened no browser; its log:\n${log}`);
      expect(log).toContain('Please authorize this client by visiting');
      expect(new URL(url).origin).toBe(origin);
      const [context, page] = await freshPage();
      const heading = await signInAndDecide(page, url, dana, 'Allow', 'Side business');
      expect(heading).toMatch(/^Connect .+ to Workflow Service\?$/);
      expect(page.url()).toContain('/oauth/callback?code=');
      await context.close();
      await connecting;
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_projects');
      // The workspace Dana granted, and only it.
      expect(await projectIds(client)).toEqual([sideProject]);
      const result = (await client.callTool({ name: 'get_project', arguments: { project_id: sideProject } })) as any;
      expect(result.structuredContent).toMatchObject({ ok: true, data: { id: sideProject } });
      const other = (await client.callTool({ name: 'get_project', arguments: { project_id: mainProject } })) as any;
      expect(other.structuredContent).toMatchObject({ ok: false, code: 'not_found' });
    } catch (e) {
      throw new Error(`${(e as Error).message}\nmcp-remote's log:\n${log}`);
    } finally {
      await client.close();
    }
  }, 90_000);

  test('the SDK client at /mcp/: dynamic registration, sign-in, tool calls, and a refresh when the access token expires', async () => {
    const callback = callbackServer();
    const provider = new MemoryProvider(callback.url);
    // The trailing-slash spelling: the canonical resource (no slash) is its prefix, so the client accepts it.
    const endpoint = new URL(`${t.mcpUrl}/`);
    try {
      const first = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
      await expect(new Client({ name: 'sdk-agent', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
      expect((provider.info as { client_id: string }).client_id).toMatch(/^wfc_/);
      const url = provider.opened.at(-1) as URL;
      expect(url.searchParams.get('resource')).toBe(t.mcpUrl);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      const [context, page] = await freshPage();
      await signInAndDecide(page, url.href, dana, 'Allow', 'Side business');
      await context.close();
      const back = await callback.next();
      await first.finishAuth(back.get('code') as string);
      const client = new Client({ name: 'sdk-agent', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
      expect(await projectIds(client)).toEqual([sideProject]);
      const firstTokens = provider.saved.at(-1) as OAuthTokens;

      // The access token expires; the client refreshes on the 401 and carries on.
      await Bun.sleep(TOKEN_SECONDS * 1000 + 500);
      expect(await projectIds(client)).toEqual([sideProject]);
      const refreshed = provider.saved.at(-1) as OAuthTokens;
      expect(refreshed.access_token).not.toBe(firstTokens.access_token);
      expect(refreshed.refresh_token).not.toBe(firstTokens.refresh_token);

      // Someone replays the spent refresh token: the family is revoked, and the client must ask the person again.
      const replay = await postForm(`${origin}/oauth/token`, {
        grant_type: 'refresh_token',
        refresh_token: firstTokens.refresh_token as string,
        client_id: (provider.info as { client_id: string }).client_id,
      });
      expect(replay.body.error).toBe('invalid_grant');
      const asked = provider.opened.length;
      await expect(projectIds(client)).rejects.toBeInstanceOf(UnauthorizedError);
      expect(provider.opened.length).toBe(asked + 1);
      expect(provider.saved).toEqual([]);
      await client.close();
    } finally {
      callback.stop();
    }
  }, 60_000);

  test('Deny reaches the SDK client as access_denied, and a wrong resource as invalid_target; nothing is issued', async () => {
    const callback = callbackServer();
    try {
      const provider = new MemoryProvider(callback.url);
      const transport = new StreamableHTTPClientTransport(new URL(t.mcpUrl), { authProvider: provider });
      await expect(new Client({ name: 'sdk-agent', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
      const [context, page] = await freshPage();
      await signInAndDecide(page, (provider.opened.at(-1) as URL).href, dana, 'Deny', 'Side business');
      const denied = await callback.next();
      expect(denied.get('error')).toBe('access_denied');
      expect(denied.get('code')).toBeNull();
      expect(denied.get('state')).toBe((provider.opened.at(-1) as URL).searchParams.get('state'));

      // A client configured for another resource is turned back before any page is shown.
      const misdirected = new MemoryProvider(callback.url, {
        validateResourceURL: async () => new URL('https://elsewhere.example/mcp'),
      });
      const wrong = new StreamableHTTPClientTransport(new URL(t.mcpUrl), { authProvider: misdirected });
      await expect(new Client({ name: 'sdk-agent', version: '1.0.0' }).connect(wrong)).rejects.toBeInstanceOf(UnauthorizedError);
      await page.goto((misdirected.opened.at(-1) as URL).href);
      const refused = await callback.next();
      expect(refused.get('error')).toBe('invalid_target');
      expect(misdirected.saved).toEqual([]);
      expect(provider.saved).toEqual([]);
      await context.close();
    } finally {
      callback.stop();
    }
  }, 60_000);
});
