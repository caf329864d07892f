import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { captureLog } from './support/capture-log.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * What the REST door answers before an operation runs (docs/api.md): 415, 405 + Allow,
 * OPTIONS, a JSON 431, CORS, and an x-request-id on all of them. Transport only, so SQLite is
 * enough: no answer here reaches the database.
 */

const APP_ORIGIN = 'https://app.example';

async function answer(res: Response): Promise<{ status: number; body: any; headers: Headers }> {
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text), headers: res.headers };
}

describe('REST transport hygiene', () => {
  let t: TestService;
  let pid: string;
  const projects = async () => (await t.api('GET', '/projects')).body.total as number;
  beforeAll(async () => {
    t = await startTestService('sqlite', { CORS_ORIGINS: `${APP_ORIGIN}, https://other.example/`, MAX_HEADER_BYTES: '8192' });
    const r = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' } } });
    pid = r.body.project_id;
  });
  afterAll(() => t.stop());

  const post = (path: string, init: { contentType?: string; body: string; key?: string | null }) => {
    const headers: Record<string, string> = {};
    if (init.key !== null) headers['service-api-key'] = init.key ?? t.key;
    if (init.contentType) headers['content-type'] = init.contentType;
    return fetch(`${t.url}${path}`, { method: 'POST', headers, body: init.body });
  };

  test('a body that is not declared JSON is 415 and creates nothing', async () => {
    const before = await projects();
    const body = JSON.stringify({ builder_id: 'manual_list_builder', form_data: { companies: 'Globex' } });
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await answer(await post('/projects', { contentType, body }));
      expect(r.status).toBe(415);
      expect(r.body.detail).toBe(`The body must be JSON sent with "Content-Type: application/json", not "${contentType}"`);
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
    // Bun's fetch labels a string body text/plain; a raw socket sends one with no Content-Type at all.
    const raw = await rawRequest(
      t.url,
      `POST ${new URL(t.url).pathname}/projects HTTP/1.1\r\nHost: x\r\nservice-api-key: ${t.key}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(raw).toStartWith('HTTP/1.1 415');
    expect(raw).toContain('(none was sent)');
    expect(await projects()).toBe(before);
  });

  test('JSON with a charset or a +json type is accepted; GET ignores Content-Type', async () => {
    const body = JSON.stringify({ builder_id: 'manual_list_builder', form_data: { companies: 'Initech' } });
    expect((await post('/projects', { contentType: 'application/json; charset=utf-8', body })).status).toBe(201);
    expect((await post('/projects', { contentType: 'application/vnd.api+json', body })).status).toBe(201);
    const list = await fetch(`${t.url}/projects`, { headers: { 'service-api-key': t.key, 'content-type': 'text/plain' } });
    expect(list.status).toBe(200);
  });

  test('a known path asked with another method is 405 with Allow; an unknown path stays 404', async () => {
    const patch = await answer(await fetch(`${t.url}/projects`, { method: 'PATCH', headers: { 'service-api-key': t.key } }));
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toBe('POST, GET, HEAD, OPTIONS');
    expect(patch.body.detail).toBe('This endpoint answers POST, GET, HEAD, OPTIONS; not PATCH');
    const put = await answer(await fetch(`${t.url}/projects/${pid}/rows/123`, { method: 'PUT' }));
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, PATCH, HEAD, OPTIONS');
    const unknown = await answer(await fetch(`${t.url}/projects/${pid}/nothing-here`, { method: 'PATCH' }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('/docs');
  });

  test('OPTIONS lists the methods of a known path (204 + Allow), with no key needed', async () => {
    const r = await fetch(`${t.url}/projects/${pid}`, { method: 'OPTIONS' });
    expect(r.status).toBe(204);
    expect(r.headers.get('allow')).toBe('GET, PATCH, DELETE, HEAD, OPTIONS');
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a URL and headers over MAX_HEADER_BYTES are 431 with a JSON detail pointing to rows/search', async () => {
    const rules = Array.from({ length: 300 }, (_, i) => ({ col_id: 'c1', operator: 'contains', value: `needle-${i}` }));
    const filter = encodeURIComponent(JSON.stringify([{ type: 'or', rules }]));
    const r = await answer(await fetch(`${t.url}/projects/${pid}/rows?filter_groups=${filter}`, { headers: { 'service-api-key': t.key } }));
    expect(r.status).toBe(431);
    expect(r.body.detail).toMatch(/^The URL and headers take \d+ bytes; the limit is 8192 \(MAX_HEADER_BYTES\)\./);
    expect(r.body.detail).toContain('POST /api/enterprise/projects/{project_id}/rows/search');
    expect(r.headers.get('x-request-id')).toBeTruthy();
    // A header block too large the same way, whatever the URL.
    const header = await fetch(`${t.url}/projects`, { headers: { 'service-api-key': t.key, 'x-note': 'n'.repeat(9000) } });
    expect(header.status).toBe(431);
    expect((await header.json()).detail).toContain('MAX_HEADER_BYTES');
    // Past Bun's own default (16 KiB) too: ours still answers first, readably.
    const huge = await fetch(`${t.url}/projects?q=${'q'.repeat(40_000)}`);
    expect(huge.status).toBe(431);
    expect((await huge.json()).detail).toContain('MAX_HEADER_BYTES');
  });

  test('filters too long for a URL go through POST rows/search as a JSON body', async () => {
    const { columns } = (await t.api('GET', `/projects/${pid}`)).body;
    const name = columns.find((c: any) => c.name === 'Name');
    const rules = Array.from({ length: 90 }, (_, i) => ({ col_id: name.col_id, operator: 'neq', value: `nobody-${i}-${'x'.repeat(80)}` }));
    const filter_groups = [{ type: 'and', rules }];
    const get = await fetch(`${t.url}/projects/${pid}/rows?filter_groups=${encodeURIComponent(JSON.stringify(filter_groups))}`, {
      headers: { 'service-api-key': t.key },
    });
    expect(get.status).toBe(431);
    const r = await t.api('POST', `/projects/${pid}/rows/search`, { body: { filter_groups, page_size: 10 } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ page: 1, page_size: 10, total_rows: 1, total_pages: 1 });
    expect(r.body.rows[0].company.Name.value).toBe('Acme');
  });

  test('an id longer than 128 characters is refused before any lookup, and not echoed', async () => {
    const long = `p${'9'.repeat(4000)}`;
    for (const path of [`/projects/${long}`, `/projects/${long}/rows?page=1`, `/projects/${pid}/rows/${long}`]) {
      const r = await t.api('GET', path);
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body)).not.toContain('9'.repeat(200));
      expect(r.body.detail.message).toMatch(/^(project_id|row_id) is 4001 characters long; ids are at most 128$/);
    }
    // Ids in a body are named in messages only in part.
    const builder = await t.api('POST', '/projects', { body: { builder_id: 'b'.repeat(200_000), form_data: {} } });
    expect(builder.status).toBe(400);
    expect(JSON.stringify(builder.body).length).toBeLessThan(2_000);
    expect(builder.body.detail.message).toStartWith(`Unknown builder_id "${'b'.repeat(64)}…"`);
    // Still a 401 first for a caller without a key: nothing about the request is judged before that.
    expect((await fetch(`${t.url}/projects/${long}`)).status).toBe(401);
  });

  test('every answer, refusals included, carries x-request-id, also in its access-log line', async () => {
    const ids: string[] = [];
    const { lines } = await captureLog(async () => {
      for (const res of [
        await fetch(`${t.url}/projects`, { method: 'PATCH' }),
        await post('/projects', { contentType: 'text/plain', body: '{}' }),
        await fetch(`${t.url}/projects?q=${'q'.repeat(9000)}`),
        await fetch(`${t.url}/projects`, { method: 'OPTIONS' }),
        await fetch(`${t.url}/projects`, { headers: { 'x-request-id': 'caller-chosen-id-1' } }),
      ]) {
        ids.push(res.headers.get('x-request-id') ?? '');
        await res.arrayBuffer();
      }
    });
    expect(ids.every((id) => id.length > 0)).toBe(true);
    expect(ids[4]).toBe('caller-chosen-id-1');
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.map((l) => [l.status, l.request_id])).toEqual([
      [405, ids[0]],
      [415, ids[1]],
      [431, ids[2]],
      [204, ids[3]],
      [401, ids[4]],
    ]);
  });

  describe('CORS (CORS_ORIGINS)', () => {
    test('an allowed origin may read answers, errors included, and the headers that matter', async () => {
      const ok = await fetch(`${t.url}/projects`, { headers: { origin: APP_ORIGIN, 'service-api-key': t.key } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(ok.headers.get('vary')).toBe('Origin');
      expect(ok.headers.get('access-control-expose-headers')).toContain('ratelimit-remaining');
      expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
      const denied = await fetch(`${t.url}/projects`, { headers: { origin: 'https://other.example' } });
      expect(denied.status).toBe(401);
      expect(denied.headers.get('access-control-allow-origin')).toBe('https://other.example');
    });

    test('a preflight from an allowed origin names the path’s methods and the headers a page may send', async () => {
      const r = await fetch(`${t.url}/projects/${pid}/rows`, {
        method: 'OPTIONS',
        headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'service-api-key' },
      });
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
      expect(r.headers.get('access-control-allow-methods')).toBe('POST, GET, DELETE, HEAD, OPTIONS');
      expect(r.headers.get('access-control-allow-headers')).toContain('service-api-key');
    });

    test('another origin gets no CORS header, so a browser keeps the answer from its page', async () => {
      const inits: RequestInit[] = [
        { headers: { origin: 'https://evil.example', 'service-api-key': t.key } },
        { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } },
      ];
      for (const init of inits) {
        const r = await fetch(`${t.url}/projects`, init);
        expect(r.headers.get('access-control-allow-origin')).toBeNull();
        expect(r.headers.get('access-control-allow-methods')).toBeNull();
      }
    });

    test('without CORS_ORIGINS no origin is allowed; "*" allows any', async () => {
      const plain = await startTestService('sqlite');
      const star = await startTestService('sqlite', { CORS_ORIGINS: '*' });
      try {
        const none = await fetch(`${plain.url}/projects`, { headers: { origin: APP_ORIGIN } });
        expect(none.headers.get('access-control-allow-origin')).toBeNull();
        const any = await fetch(`${star.url}/projects`, { headers: { origin: 'https://anyone.example' } });
        expect(any.headers.get('access-control-allow-origin')).toBe('*');
        expect(any.headers.get('vary')).toBeNull();
      } finally {
        await plain.stop();
        await star.stop();
      }
    });
  });
});

/** Sends raw HTTP/1.1 (what fetch will not: a body without Content-Type) to the service and answers the reply's text. */
async function rawRequest(baseUrl: string, text: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  const { promise, resolve } = Promise.withResolvers<string>();
  let reply = '';
  await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      open: (socket) => void socket.write(text),
      data: (_socket, chunk) => {
        reply += chunk.toString();
      },
      close: () => resolve(reply),
      error: () => resolve(reply),
    },
  });
  return promise;
}
