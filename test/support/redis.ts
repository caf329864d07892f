import { type Subprocess, spawn } from 'bun';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { Redis } from 'ioredis';

/**
 * A throwaway redis-server for tests: loopback, a free port, its own temp dir, no persistence
 * (`--save '' --appendonly no`) unless `persistent` (AOF, fsync always: survives `restart()`).
 * With REDIS_URL set, that server is used instead and `owned` is false (it cannot be restarted).
 * Needs the Debian `redis-server` package (scripts/setup-services.sh installs it).
 */
export interface RedisServer {
  url: string;
  owned: boolean;
  /** Stops the server, keeps it down `downMs`, starts it again on the same port and dir (owned only). */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

let prefixCounter = 0;

/** A key prefix no other suite or run uses, so that suites can share one server. */
export function freshPrefix(name = 'q'): string {
  return `test:${name}:${process.pid}:${++prefixCounter}:${Math.random().toString(36).slice(2, 8)}`;
}

async function waitForPing(url: string, proc: Subprocess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with code ${proc.exitCode}`);
    const c = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.ping();
      c.disconnect();
      return;
    } catch (e) {
      last = e;
      c.disconnect();
      await Bun.sleep(50);
    }
  }
  throw new Error(`redis-server did not answer within ${timeoutMs} ms: ${String(last)}`);
}

export async function startRedis(options: { persistent?: boolean; password?: string; ownServer?: boolean } = {}): Promise<RedisServer> {
  if (process.env.REDIS_URL && !options.ownServer) {
    return {
      url: process.env.REDIS_URL,
      owned: false,
      restart: async () => Promise.reject(new Error('cannot restart REDIS_URL')),
      stop: async () => undefined,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'wfs-redis-'));
  const port = freePort();
  const args = [
    'redis-server',
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
    '--maxmemory-policy',
    'noeviction',
  ];
  args.push(...(options.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
  if (options.password) args.push('--requirepass', options.password);
  const auth = options.password ? `:${encodeURIComponent(options.password)}@` : '';
  const url = `redis://${auth}127.0.0.1:${port}`;
  let proc: Subprocess | undefined;
  const launch = async () => {
    proc = spawn(args, { stdout: 'ignore', stderr: 'pipe' });
    try {
      await waitForPing(url, proc, 10_000);
    } catch (e) {
      proc.kill('SIGKILL');
      throw e;
    }
  };
  const halt = async () => {
    if (!proc) return;
    proc.kill('SIGTERM');
    await Promise.race([proc.exited, Bun.sleep(5000)]);
    if (proc.exitCode === null) proc.kill('SIGKILL');
    await proc.exited;
    proc = undefined;
  };
  try {
    await launch();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start redis-server (is it installed? run scripts/setup-services.sh): ${(e as Error).message}`);
  }
  return {
    url,
    owned: true,
    async restart(downMs = 1000) {
      await halt();
      await Bun.sleep(downMs);
      await launch();
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
