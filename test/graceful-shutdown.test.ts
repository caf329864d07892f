import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { freePort } from './support/free-port.ts';

/**
 * SIGTERM on an API or MCP process (docs/scaling.md, rolling restarts): it stops accepting at once, the
 * requests it is serving finish and are answered, and it exits 0; SHUTDOWN_GRACE_MS bounds the wait.
 * Real processes (`bun app/main.ts`) and raw sockets, so that a request is provably in flight: its
 * body is half sent when the signal arrives.
 */
const MAIN = resolve(import.meta.dir, '../app/main.ts');
const KEY = 'wfs_graceful_test_key_0123456789abcdef';

interface Proc {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>;
  port: number;
  dir: string;
}
const started: Proc[] = [];

afterEach(() => {
  for (const p of started.splice(0)) {
    p.proc.kill('SIGKILL');
    rmSync(p.dir, { recursive: true, force: true });
  }
});

async function start(serve: 'rest' | 'mcp', env: Record<string, string> = {}): Promise<Proc> {
  const dir = mkdtempSync(join(tmpdir(), 'wfs-graceful-'));
  const port = await freePort();
  const proc = Bun.spawn(['bun', MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      SERVE: serve,
      [serve === 'rest' ? 'PORT' : 'MCP_PORT']: String(port),
      DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
      BOOTSTRAP_API_KEY: KEY,
      PROVIDER_MODE: 'sandbox',
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const p = { proc, port, dir };
  started.push(p);
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`${serve} process did not answer /health`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return p;
    await Bun.sleep(100);
  }
}

/** An HTTP/1.1 request on a raw socket: the head and the first half of the body now, the rest on `finish()`. */
async function halfSent(port: number, path: string, body: string, headers: Record<string, string> = {}) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((ok, fail) => socket.once('connect', ok).once('error', fail));
  let received = '';
  const closed = new Promise<void>((ok) => socket.once('close', () => ok()));
  socket.on('data', (d) => {
    received += d.toString();
  });
  socket.on('error', () => undefined);
  const head = [
    `POST ${path} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    `service-api-key: ${KEY}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ].join('\r\n');
  const half = Math.floor(body.length / 2);
  socket.write(`${head}\r\n\r\n${body.slice(0, half)}`);
  // In flight means the server has taken the connection and read the head: on a loaded machine the
  // accept may lag the connect, and a connection still in the kernel's backlog at SIGTERM is not one.
  await Bun.sleep(250);
  return {
    finish: async () => {
      socket.write(body.slice(half));
      await closed;
      return received;
    },
    closed: async () => {
      await closed;
      return received;
    },
  };
}

/** Resolves once the port refuses connections (the process stopped accepting). */
async function refused(port: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      () => true,
      () => false,
    );
    if (!up) return;
    await Bun.sleep(50);
  }
  throw new Error(`port ${port} still accepts connections`);
}

test('REST: SIGTERM stops accepting, a request in flight is still answered, the process exits 0', async () => {
  const { proc, port } = await start('rest');
  const body = JSON.stringify({ builder_id: 'manual_list_builder', form_data: { companies: 'Acme\nGlobex' }, name: 'in flight' });
  const request = await halfSent(port, '/api/enterprise/projects', body);
  proc.kill('SIGTERM');
  await refused(port); // a balancer's next connection goes elsewhere…
  const answer = await request.finish(); // …while this one is served to the end
  expect(answer).toStartWith('HTTP/1.1 201');
  expect(answer).toContain('"project_id"');
  expect(await proc.exited).toBe(0);
});

test('MCP: SIGTERM lets a tool call in flight finish, then exits 0', async () => {
  const { proc, port } = await start('mcp');
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_builders', arguments: {} } });
  const request = await halfSent(port, '/mcp/', body, { accept: 'application/json, text/event-stream' });
  proc.kill('SIGTERM');
  await refused(port);
  const answer = await request.finish();
  expect(answer).toStartWith('HTTP/1.1 200');
  expect(answer).toContain('manual_list_builder');
  expect(await proc.exited).toBe(0);
});

test('SHUTDOWN_DELAY_MS keeps serving with /ready at 503 "draining"; SHUTDOWN_GRACE_MS cuts a request that never ends', async () => {
  const { proc, port } = await start('rest', { SHUTDOWN_DELAY_MS: '1500', SHUTDOWN_GRACE_MS: '500' });
  const before = await fetch(`http://127.0.0.1:${port}/ready`);
  expect(before.status).toBe(200);
  expect(before.headers.get('connection')).not.toBe('close');
  const stuck = await halfSent(port, '/api/enterprise/projects', JSON.stringify({ builder_id: 'manual_list_builder', form_data: {} }));
  const signalled = performance.now();
  proc.kill('SIGTERM');
  await Bun.sleep(300);
  const ready = await fetch(`http://127.0.0.1:${port}/ready`);
  expect(ready.status).toBe(503);
  expect((await ready.json()).status).toBe('draining');
  // Still serving meanwhile (the balancer has time to notice), closing each connection after its answer.
  const served = await fetch(`http://127.0.0.1:${port}/api/enterprise/projects`, { headers: { 'service-api-key': KEY } });
  expect(served.status).toBe(200);
  expect(served.headers.get('connection')).toBe('close');
  expect(await stuck.closed()).toBe(''); // cut after the grace, unanswered
  expect(await proc.exited).toBe(0);
  const took = performance.now() - signalled;
  expect(took).toBeGreaterThan(1_500 + 400);
  expect(took).toBeLessThan(20_000); // a hang, not a slow machine (10× the two seconds of grace)
});
