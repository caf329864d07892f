import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { captureLog } from './support/capture-log.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * Every route runs one chain (docs/architecture.md, "One way in"): the routes outside the operation
 * table — export, import, inbound, events, account, sign-in — answer with the request id the access
 * log holds, parse JSON exactly, appear in OPTIONS/405 as mounted, and are documented like the rest.
 */

const OWNER = { email: 'chain-owner@example.com', password: 'owner-password-1' };
const BIG = '12345678901234567890';

describe('one chain for every route', () => {
  let t: TestService;
  let origin: string;
  let pid: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    t = await startTestService('sqlite', {
      MCP_PORT: '0',
      BOOTSTRAP_ADMIN_EMAIL: OWNER.email,
      BOOTSTRAP_ADMIN_PASSWORD: OWNER.password,
    });
    origin = new URL(t.url).origin;
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name,Website\nAcme,acme.com' }, name: 'Chain' },
    });
    pid = made.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(OWNER),
    });
    cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    csrf = ((await res.json()) as { csrf_token: string }).csrf_token;
  });
  afterAll(() => t.stop());

  /** A failure the route did not expect, inside the storage it reads: its 500 must name the logged request. */
  async function internalErrorOf(send: () => Promise<Response>, breakIt: () => () => void) {
    const restore = breakIt();
    let header = '';
    try {
      const { lines } = await captureLog(async () => {
        const res = await send();
        expect(res.status).toBe(500);
        const body = (await res.json()) as { detail: string };
        header = res.headers.get('x-request-id') as string;
        expect(header).toBeTruthy();
        expect(body.detail).toContain(`request ${header}`);
      });
      const logged = lines.find((l) => l.msg === 'request' && l.status === 500);
      expect(logged?.request_id).toBe(header);
    } finally {
      restore();
    }
  }

  /** Makes one storage method throw an unexpected error until restored. */
  function breakMethod(target: Record<string, unknown>, name: string) {
    return () => {
      const original = target[name];
      target[name] = async () => {
        throw new Error('disk on fire');
      };
      return () => {
        target[name] = original;
      };
    };
  }

  test('a 500 of an export, an import, an inbound URL, an event stream or an account route names the request id that was logged', async () => {
    const storage = t.service.kernel.storage as unknown as Record<string, Record<string, unknown>>;
    const keyed = { 'service-api-key': t.key };
    await internalErrorOf(
      () => fetch(`${t.url}/projects/${pid}/export.csv`, { headers: keyed }),
      breakMethod(storage.projects as Record<string, unknown>, 'columns'),
    );
    await internalErrorOf(
      () => fetch(`${t.url}/projects/${pid}/events`, { headers: keyed }),
      breakMethod(storage.workspaces as Record<string, unknown>, 'findKey'),
    );
    await internalErrorOf(
      () => fetch(`${t.url}/projects/import.csv`, { method: 'POST', headers: { ...keyed, 'content-type': 'text/csv' }, body: 'Name\nA\n' }),
      breakMethod(storage.uploads as Record<string, unknown>, 'create'),
    );
    const inbound = await t.api('POST', `/projects/${pid}/inbound`);
    await internalErrorOf(
      () => fetch(inbound.body.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Name":"X"}' }),
      breakMethod(storage.projects as Record<string, unknown>, 'columns'),
    );
    await internalErrorOf(
      () => fetch(`${origin}/account/keys`, { headers: { cookie } }),
      breakMethod(storage.workspaces as Record<string, unknown>, 'listKeys'),
    );
  });

  test('a number JSON cannot carry exactly is refused through an inbound URL, an account route and MCP, as on POST rows', async () => {
    const inbound = await t.api('POST', `/projects/${pid}/inbound`);
    const before = (await t.api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows.length;
    const viaInbound = await fetch(inbound.body.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"Name": ${BIG}}`,
    });
    expect(viaInbound.status).toBe(422);
    expect(JSON.stringify(await viaInbound.json())).toContain(BIG);
    expect((await t.api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows.length).toBe(before);

    const viaRows = await t.api('POST', `/projects/${pid}/rows`, {
      rawBody: `{"company": {"Name": ${BIG}}}`,
      headers: { 'content-type': 'application/json' },
    });
    // add_row answers its invalid bodies with 403 (the spec's status for it); the number is named either way.
    expect(viaRows.status).toBe(403);
    expect(JSON.stringify(viaRows.body)).toContain(BIG);

    const viaAccount = await fetch(`${origin}/account/keys`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      body: `{"monthly_credits": ${BIG}}`,
    });
    expect(viaAccount.status).toBe(422);
    expect(JSON.stringify(await viaAccount.json())).toContain(BIG);

    // MCP: the same number inside a tool call's arguments is refused, not handed to the tool rounded.
    const mcpUrl = t.service.mcpUrl as string;
    const viaMcp = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'service-api-key': t.key },
      body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add_row","arguments":{"project_id":"${pid}","company":{"Name":${BIG}}}}}`,
    });
    const answer = (await viaMcp.json()) as { id: number; error?: { code: number; message: string } };
    expect(answer.id).toBe(5);
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toContain(BIG);
    expect((await t.api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows.length).toBe(before);
  });

  test('OPTIONS and 405 know every mounted route, PUT /account/keys/{prefix}/cap among them', async () => {
    const options = await fetch(`${origin}/account/keys/wfs_abcdefgh/cap`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')?.split(', ')).toContain('PUT');
    const wrong = await fetch(`${origin}/account/keys/wfs_abcdefgh/cap`, { headers: { cookie } });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')?.split(', ')).toContain('PUT');
    const inbound = await fetch(`${t.url}/inbound/in_nothing`, { method: 'GET' });
    expect(inbound.status).toBe(405);
    expect(inbound.headers.get('allow')).toContain('POST');
  });

  test('the routes outside the table carry rate headers and are documented with what the chain answers', async () => {
    const csv = await fetch(`${t.url}/projects/${pid}/export.csv`, { headers: { 'service-api-key': t.key } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('ratelimit-limit')).toBeTruthy();
    await csv.text();

    const doc = (await t.api('GET', '/docs/json')).body as { paths: Record<string, Record<string, any>> };
    const base = new URL(t.url).pathname;
    const entries: [string, string, any][] = [
      ['get', `${base}/projects/{project_id}/export.csv`, doc.paths[`${base}/projects/{project_id}/export.csv`]?.get],
      ['post', `${base}/projects/import.csv`, doc.paths[`${base}/projects/import.csv`]?.post],
      ['post', `${base}/inbound/{token}`, doc.paths[`${base}/inbound/{token}`]?.post],
      ['get', `${base}/projects/{project_id}/events`, doc.paths[`${base}/projects/{project_id}/events`]?.get],
    ];
    for (const [method, path, entry] of entries) {
      expect(entry, `${method} ${path}`).toBeDefined();
      for (const p of entry.parameters ?? []) if (!p.$ref) expect(p.description, `${path} ${p.name}`).toBeTruthy();
      for (const status of ['500', '503']) expect(entry.responses[status], `${path} ${status}`).toBeDefined();
      expect(entry.responses['503'].headers['Retry-After']).toBeDefined();
      for (const response of Object.values(entry.responses) as any[]) expect(response.headers['x-request-id']).toBeDefined();
    }
    const exportEntry = entries[0]?.[2];
    expect(exportEntry.responses['429'].headers['Retry-After']).toBeDefined();
    expect(exportEntry.responses['200'].headers['RateLimit-Limit']).toBeDefined();
    expect(exportEntry.responses['404']).toBeDefined();
    expect(entries[2]?.[2].responses['413']).toBeDefined();
    expect(entries[1]?.[2].responses['409']).toBeDefined();
  });
});
