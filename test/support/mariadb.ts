import { type Subprocess, spawn } from 'bun';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { createConnection } from 'mysql2/promise';

/**
 * A throwaway MariaDB server for tests and benchmarks: its own data dir under /tmp, loopback
 * only, a free port, root without password. Needs the Debian `mariadb-server` package
 * (scripts/setup-services.sh installs it).
 */
export interface MariaDbServer {
  url: string;
  /** Stops the server (data kept), waits `downMs`, starts it again on the same port. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

async function waitForConnect(port: number, proc: Subprocess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`mariadbd exited with code ${proc.exitCode}`);
    try {
      const c = await createConnection({ host: '127.0.0.1', port, user: 'root' });
      await c.end();
      return;
    } catch (e) {
      last = e;
      await Bun.sleep(100);
    }
  }
  throw new Error(`mariadbd did not accept connections within ${timeoutMs} ms: ${String(last)}`);
}

export async function startMariaDb(
  options: { flushEachCommit?: boolean; bufferPoolMb?: number; performanceSchema?: boolean } = {},
): Promise<MariaDbServer> {
  const dir = mkdtempSync(join(tmpdir(), 'wfs-mariadb-'));
  const datadir = join(dir, 'data');
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const install = Bun.spawnSync(
    [
      'mariadb-install-db',
      '--no-defaults',
      `--datadir=${datadir}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  );
  if (install.exitCode !== 0) {
    throw new Error(
      `mariadb-install-db failed (is mariadb-server installed? run scripts/setup-services.sh): ${install.stderr.toString().slice(-500)}`,
    );
  }
  const port = freePort();
  const args = [
    'mariadbd',
    '--no-defaults',
    `--datadir=${datadir}`,
    `--socket=${join(dir, 'mysqld.sock')}`,
    // Its own temp dir: servers of parallel test runs must not share temp-table files.
    `--tmpdir=${tmp}`,
    `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    '--user=root',
    '--skip-log-bin',
    `--innodb-buffer-pool-size=${options.bufferPoolMb ?? 512}M`,
    '--innodb-log-file-size=256M',
    `--innodb-flush-log-at-trx-commit=${options.flushEachCommit ? 1 : 2}`,
    '--max-connections=500',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_unicode_ci',
    // Statement digests (count and time per statement shape), for benchmarks that say where time goes.
    ...(options.performanceSchema ? ['--performance-schema=ON'] : []),
  ];
  const launch = () => spawn(args, { stdout: 'ignore', stderr: 'pipe' });
  let proc = launch();
  const halt = async () => {
    proc.kill('SIGTERM');
    await Promise.race([proc.exited, Bun.sleep(10_000)]);
    if (proc.exitCode === null) proc.kill('SIGKILL');
    await proc.exited;
  };
  try {
    await waitForConnect(port, proc, 30_000);
  } catch (e) {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    url: `mysql://root@127.0.0.1:${port}`,
    async restart(downMs = 0) {
      await halt();
      await Bun.sleep(downMs);
      proc = launch();
      await waitForConnect(port, proc, 30_000);
    },
    async stop() {
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates an empty database on the server and returns its URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const c = await createConnection(serverUrl);
  await c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await c.end();
  return `${serverUrl}/${name}`;
}
