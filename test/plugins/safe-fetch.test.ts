import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { ProviderError, providerJson } from '../../core/plugins/provider-http.ts';
import {
  BlockedUrlError,
  FetchTimeoutError,
  InvalidRequestError,
  nonPublicReason,
  RedirectError,
  ResponseTooLargeError,
  safeFetch,
} from '../../core/plugins/safe-fetch.ts';
import { type FakeServer, startFakeServer } from '../support/fake-providers.ts';
import { setEnv } from './enrich-helpers.ts';

/** What a plugin hands providerJson: its context (these calls read no env). */
const ctx = { providerMode: 'live' as const, env: () => undefined, signal: new AbortController().signal, log: () => {} };

const MB = 1024 * 1024;

/** The ProviderError a call fails with (the test fails if it succeeds). */
const failure = (p: Promise<unknown>): Promise<ProviderError> =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e) => e as ProviderError,
  );

describe('which addresses count as public', () => {
  test('every private, loopback, link-local and otherwise special range is refused', () => {
    for (const ip of [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '100.64.0.1',
      '127.0.0.1',
      '127.255.0.9',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::7f00:1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      '2001:db8::1',
    ]) {
      expect([ip, nonPublicReason(ip)]).not.toEqual([ip, null]);
    }
  });

  test('public unicast addresses pass', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(nonPublicReason(ip)).toBeNull();
  });
});

describe('safeFetch', () => {
  let server: FakeServer;
  let other: FakeServer;
  beforeAll(() => {
    const big = 'x'.repeat(2 * MB);
    server = startFakeServer({
      '/ok': () => new Response('hello'),
      '/big': () => new Response(big),
      '/stream': () =>
        new Response(
          new ReadableStream({
            async pull(controller) {
              controller.enqueue(new TextEncoder().encode('y'.repeat(64 * 1024)));
              await Bun.sleep(1);
            },
          }),
        ),
      '/slow': async () => {
        await Bun.sleep(1500);
        return new Response('late');
      },
      '/loop': () => Response.redirect('/loop', 302),
      '/to-ipv6-loopback': () => Response.redirect(`http://[::1]:${server.port}/ok`, 302),
      '/to-private': () => Response.redirect('http://10.1.2.3/', 302),
      '/to-other': () => Response.redirect(`${other.url}/echo`, 307),
      '/same-origin': () => Response.redirect('/echo', 302),
      '/echo': (r) =>
        Response.json({ host: r.headers.get('host'), authorization: r.headers.get('authorization'), accept: r.headers.get('accept') }),
    });
    other = startFakeServer({
      '/echo': (r) => Response.json({ authorization: r.headers.get('authorization'), accept: r.headers.get('accept') }),
    });
  });
  afterAll(() => {
    server.stop();
    other.stop();
  });
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());
  const closed = () => (restore = setEnv({ ALLOW_PRIVATE_NETWORK: undefined }));
  const open = (value = '1') => (restore = setEnv({ ALLOW_PRIVATE_NETWORK: value }));

  test('refuses loopback, private and IPv6 loopback addresses without ALLOW_PRIVATE_NETWORK, before connecting', async () => {
    closed();
    const before = server.requests.length;
    for (const url of [
      `${server.url}/ok`,
      'http://10.0.0.1/',
      `http://[::1]:${server.port}/ok`,
      `http://[::ffff:127.0.0.1]:${server.port}/ok`,
      'http://2130706433/',
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      const e = await safeFetch(url, { timeoutMs: 2000 }).catch((x) => x);
      expect(e).toBeInstanceOf(BlockedUrlError);
      expect(e.message).toStartWith('refused: private or reserved address (');
      expect(e.message).toContain('ALLOW_PRIVATE_NETWORK');
      expect(e.message).not.toMatch(/loopback|linkLocal|private\)|is reserved/); // not which range
    }
    expect(server.requests.length).toBe(before);
  });

  test('refuses a host name that resolves to a private address without naming the address', async () => {
    closed();
    const e = await safeFetch(`http://localhost:${server.port}/ok`).catch((x) => x);
    expect(e).toBeInstanceOf(BlockedUrlError);
    expect(e.message).toBe(
      'refused: private or reserved address (localhost has no public address); an operator may allow private addresses with ALLOW_PRIVATE_NETWORK',
    );
    expect(e.message).not.toMatch(/\d+\.\d+\.\d+\.\d+|::1|loopback/);
  });

  test('a name that does not resolve is refused in the same words: no telling internal names from missing ones', async () => {
    closed();
    const missing = await safeFetch('http://no-such-host.invalid/', { timeoutMs: 5000 }).catch((x) => x);
    const internal = await safeFetch(`http://localhost:${server.port}/`).catch((x) => x);
    expect(missing).toBeInstanceOf(BlockedUrlError);
    expect(missing.message.replace('no-such-host.invalid', 'HOST')).toBe(internal.message.replace('localhost', 'HOST'));
  });

  test('a header value with a line break, a NUL or a character beyond Latin-1 is refused before anything is sent', async () => {
    open();
    const before = server.requests.length;
    const cases: [Record<string, string>, string][] = [
      [{ 'X-Tag': 'a\r\nX-Injected: 1' }, 'header X-Tag contains a line break'],
      [{ 'X-Tag': 'only\nLF' }, 'header X-Tag contains a line break'],
      [{ 'X-Tag': 'only\rCR' }, 'header X-Tag contains a line break'],
      [{ 'X-Tag': 'nul\0byte' }, 'header X-Tag contains a NUL character'],
      [{ 'X-Tag': 'Łódź' }, 'header X-Tag contains characters a header value cannot carry'],
      [{ 'Bad Name': 'x' }, 'header name "Bad Name" is not a valid header name'],
    ];
    for (const [headers, message] of cases) {
      const e = await safeFetch(`${server.url}/echo`, { headers }).catch((x) => x);
      expect(e).toBeInstanceOf(InvalidRequestError);
      expect(e.message).toContain(message);
      expect(e.message).not.toContain('X-Injected');
    }
    expect(server.requests.length).toBe(before);
    // Latin-1 and tabs are fine.
    expect((await safeFetch(`${server.url}/echo`, { headers: { 'X-Tag': 'Zürich\tok' } })).status).toBe(200);
  });

  test('refuses schemes other than http and https', async () => {
    open();
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://127.0.0.1/']) {
      expect(await safeFetch(url).catch((x) => x)).toBeInstanceOf(BlockedUrlError);
    }
  });

  test('ALLOW_PRIVATE_NETWORK=1 opens them; a host name keeps its Host header', async () => {
    open();
    const r = await safeFetch(`${server.url}/ok`);
    expect([r.status, r.text()]).toEqual([200, 'hello']);
    const byName = await safeFetch(`http://localhost:${server.port}/echo`);
    expect(JSON.parse(byName.text()).host).toBe(`localhost:${server.port}`);
  });

  test('a redirect to a private address is refused even when the first hop was allowed', async () => {
    open('127.0.0.1/32'); // only 127.0.0.1 is opened, not ::1 nor 10/8
    expect((await safeFetch(`${server.url}/ok`)).status).toBe(200);
    for (const path of ['/to-ipv6-loopback', '/to-private']) {
      const e = await safeFetch(`${server.url}${path}`).catch((x) => x);
      expect(e).toBeInstanceOf(BlockedUrlError);
    }
  });

  test('follows redirects, and drops credentials when one leaves the origin', async () => {
    open();
    const same = await safeFetch(`${server.url}/same-origin`, { headers: { authorization: 'Bearer secret', accept: 'application/json' } });
    expect(JSON.parse(same.text())).toMatchObject({ authorization: 'Bearer secret' });
    expect(same.redirects).toEqual([`${server.url}/same-origin`]);
    const cross = await safeFetch(`${server.url}/to-other`, { headers: { authorization: 'Bearer secret', accept: 'application/json' } });
    expect(cross.url).toBe(`${other.url}/echo`);
    expect(JSON.parse(cross.text())).toEqual({ authorization: null, accept: 'application/json' });
    expect(await safeFetch(`${server.url}/loop`).catch((x) => x)).toBeInstanceOf(RedirectError);
  });

  test('stops reading past maxBytes, whether or not the size was announced', async () => {
    open();
    expect(await safeFetch(`${server.url}/big`, { maxBytes: MB }).catch((x) => x)).toBeInstanceOf(ResponseTooLargeError);
    expect(await safeFetch(`${server.url}/stream`, { maxBytes: MB }).catch((x) => x)).toBeInstanceOf(ResponseTooLargeError);
    expect((await safeFetch(`${server.url}/big`, { maxBytes: 3 * MB })).body.byteLength).toBe(2 * MB);
  });

  test('gives up after timeoutMs', async () => {
    open();
    // The endpoint answers after 1.5 s: without the time limit this would be a response, not an error.
    expect(await safeFetch(`${server.url}/slow`, { timeoutMs: 200 }).catch((x) => x)).toBeInstanceOf(FetchTimeoutError);
  });
});

describe('providerJson over safeFetch', () => {
  let server: FakeServer;
  let restore: () => void;
  beforeAll(() => {
    restore = setEnv({ ALLOW_PRIVATE_NETWORK: '1' });
    server = startFakeServer({
      '/echo-key': (r) => Response.json({ error: `bad key ${r.headers.get('x-api-key')}` }, { status: 401 }),
      '/busy': () => new Response('slow down', { status: 429, headers: { 'retry-after': '3' } }),
      '/down': () => new Response('oops', { status: 503 }),
      // Retry-After as an HTTP date (RFC 9110), 5 s ahead: whole seconds, so 4–5 s from now.
      '/maintenance': () =>
        new Response('back soon', { status: 503, headers: { 'retry-after': new Date(Date.now() + 5000).toUTCString() } }),
    });
  });
  afterAll(() => {
    server.stop();
    restore();
  });

  test('a key the provider echoes back never reaches the error text', async () => {
    const e = await failure(providerJson(ctx, `${server.url}/echo-key`, { headers: { 'X-Api-Key': 'super-secret-key' } }));
    expect(e).toBeInstanceOf(ProviderError);
    expect(e.message).not.toContain('super-secret-key');
    expect(e.message).toContain('[redacted]');
    expect(e.retryable).toBe(false);
  });

  test('429 and 5xx are retryable; Retry-After is kept', async () => {
    const busy = await failure(providerJson(ctx, `${server.url}/busy`, {}));
    expect([busy.status, busy.retryable, busy.retryAfterMs]).toEqual([429, true, 3000]);
    const down = await failure(providerJson(ctx, `${server.url}/down`, {}));
    expect([down.status, down.retryable, down.retryAfterMs]).toEqual([503, true, undefined]);
    const later = await failure(providerJson(ctx, `${server.url}/maintenance`, {}));
    expect([later.status, later.retryable]).toEqual([503, true]);
    expect(later.retryAfterMs).toBeGreaterThan(3000);
    expect(later.retryAfterMs).toBeLessThanOrEqual(5000);
  });

  test('a header that cannot be sent is a permanent ProviderError, never a retried network failure', async () => {
    const e = await failure(providerJson(ctx, `${server.url}/down`, { headers: { 'X-Row': 'x\r\nX-Evil: 1' } }));
    expect(e).toBeInstanceOf(ProviderError);
    expect([e.retryable, e.status]).toEqual([false, null]);
    expect(e.message).toContain('header X-Row contains a line break');
  });

  test('a refused address is a permanent ProviderError', async () => {
    const r = setEnv({ ALLOW_PRIVATE_NETWORK: '0' });
    try {
      const e = await failure(providerJson(ctx, `${server.url}/down`, {}));
      expect(e).toBeInstanceOf(ProviderError);
      expect(e.retryable).toBe(false);
      expect(e.message).toContain('refused');
    } finally {
      r();
    }
  });
});
