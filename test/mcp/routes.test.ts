import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { inflateSync } from 'node:zlib';
import { type McpTestService, startMcpTestService } from './mcp-support.ts';

/** Checks a PNG the way a decoder would: signature, chunk CRCs, IHDR size, pixel data that inflates to size. */
function decodePng(bytes: Uint8Array): { width: number; height: number } {
  const buf = Buffer.from(bytes);
  expect([...buf.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  let offset = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  while (offset < buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('ascii', offset + 4, offset + 8);
    const body = buf.subarray(offset + 8, offset + 8 + length);
    expect(buf.readUInt32BE(offset + 8 + length)).toBe(Bun.hash.crc32(buf.subarray(offset + 4, offset + 8 + length)));
    if (type === 'IHDR') [width, height] = [body.readUInt32BE(0), body.readUInt32BE(4)];
    if (type === 'IDAT') idat.push(body);
    offset += 12 + length;
  }
  expect(inflateSync(Buffer.concat(idat)).length).toBe(height * (1 + width * 4));
  return { width, height };
}

describe('MCP host routes that need no credentials', () => {
  let t: McpTestService;
  let origin: string;
  beforeAll(async () => {
    t = await startMcpTestService('sqlite');
    origin = new URL(t.mcpUrl).origin;
  });
  afterAll(() => t.stop());

  test('GET / is an HTML status page naming the MCP URL, the OAuth metadata and the tool count', async () => {
    const res = await fetch(`${origin}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain(t.mcpUrl);
    expect(html).toContain(`${origin}/.well-known/oauth-protected-resource/mcp`);
    const { operations } = await import('../../core/operations/index.ts');
    expect(html).toContain(`Tools: <strong>${operations.filter((op) => !op.restOnly).length}</strong>`);
  });

  test('/health and /healthz answer {"status":"ok"}', async () => {
    for (const path of ['/health', '/healthz']) {
      const res = await fetch(origin + path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    }
  });

  test('/ready answers as on the REST host: the database with its migrations, and the queue', async () => {
    const res = await fetch(`${origin}/ready`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe('ready');
    expect(body.checks.database).toBe('ok');
    expect(['ok', 'in-process']).toContain(body.checks.queue);
  });

  test('/favicon.png is a valid 32×32 PNG and /favicon.ico a valid icon holding it', async () => {
    const png = await fetch(`${origin}/favicon.png`);
    expect(png.headers.get('content-type')).toBe('image/png');
    const pngBytes = new Uint8Array(await png.arrayBuffer());
    expect(decodePng(pngBytes)).toEqual({ width: 32, height: 32 });
    const ico = await fetch(`${origin}/favicon.ico`);
    expect(ico.headers.get('content-type')).toBe('image/x-icon');
    const icoBytes = Buffer.from(await ico.arrayBuffer());
    expect([icoBytes.readUInt16LE(0), icoBytes.readUInt16LE(2), icoBytes.readUInt16LE(4)]).toEqual([0, 1, 1]);
    const [size, at] = [icoBytes.readUInt32LE(14), icoBytes.readUInt32LE(18)];
    expect(icoBytes[6]).toBe(32);
    expect(decodePng(icoBytes.subarray(at, at + size))).toEqual({ width: 32, height: 32 });
  });

  test('both well-known metadata paths answer RFC 9728 metadata for the MCP URL', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const meta = await (await fetch(origin + path)).json();
      expect(meta).toMatchObject({
        resource: t.mcpUrl,
        authorization_servers: expect.any(Array),
        bearer_methods_supported: ['header'],
        scopes_supported: expect.any(Array),
      });
    }
  });

  test('/mcp and /mcp/ are the same endpoint; GET (no sessions, no event stream) is 405', async () => {
    for (const path of ['/mcp', '/mcp/']) {
      const res = await fetch(origin + path, { headers: { 'service-api-key': t.key, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect((await fetch(origin + path)).status).toBe(401);
    }
  });

  test('MCP_RESOURCE_URL (behind a proxy) becomes the resource (canonical, without its slash) and the audience', async () => {
    const proxied = await startMcpTestService('sqlite', { MCP_RESOURCE_URL: 'https://mcp.example.com/mcp/' });
    try {
      const origin2 = new URL(proxied.mcpUrl).origin;
      const meta = await (await fetch(`${origin2}/.well-known/oauth-protected-resource/mcp`)).json();
      expect(meta.resource).toBe('https://mcp.example.com/mcp');
      const res = await fetch(proxied.mcpUrl, { method: 'POST' });
      expect(res.headers.get('www-authenticate')).toContain(
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
      );
    } finally {
      await proxied.stop();
    }
  });
});
