import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { freePort } from '../../test/support/free-port.ts';
import { createDatabase, type MariaDbServer, startMariaDb } from '../../test/support/mariadb.ts';
import { type RedisServer, startRedis } from '../../test/support/redis.ts';
import { nginxConfig } from './nginx-config.ts';

/**
 * The reference cluster (docs/scaling.md, docs/scaling.md) on loopback: one MariaDB and one Redis, API,
 * MCP and worker processes as a deployment runs them (`app/main.ts` with SERVE=rest|mcp,
 * `app/worker.ts`), and nginx (the Debian package, as a plain process) in front.
 */
export type Role = 'api' | 'mcp' | 'worker';

export interface ClusterOptions {
  apis?: number;
  mcps?: number;
  workers?: number;
  /** Extra environment of every process (e.g. PLUGINS_DIR). */
  env?: Record<string, string>;
}

interface Member {
  role: Role;
  index: number;
  port?: number;
  proc: Subprocess;
}

export interface Cluster {
  /** REST base URL through nginx. */
  restUrl: string;
  /** MCP endpoint through nginx. */
  mcpUrl: string;
  /** nginx's origin (GET /health, /ready, /metrics go to an API process), and PUBLIC_URL: the OAuth issuer. */
  origin: string;
  /** The cluster's database, for the admin CLI. */
  databaseUrl: string;
  apiKey: string;
  /** Where each process writes its log (`<role>-<index>.log`) and nginx its error log. */
  logDir: string;
  /** SIGTERM to one process, wait for its exit (a graceful one answers what it holds), start it again on the same port. */
  restart(role: Role, index: number): Promise<{ exitCode: number | null; downMs: number }>;
  stop(): Promise<void>;
}

const ROOT = resolve(import.meta.dir, '../..');
const API_KEY = 'wfs_cluster_reference_key_0123456789abcdef';

async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

const answers = (url: string) => async () => (await fetch(url)).ok;

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const counts: Record<Role, number> = { api: options.apis ?? 2, mcp: options.mcps ?? 2, worker: options.workers ?? 3 };
  const dir = mkdtempSync(join(tmpdir(), 'wfs-cluster-'));
  const logDir = join(dir, 'logs');
  mkdirSync(logDir);
  let db: MariaDbServer | undefined;
  let redis: RedisServer | undefined;
  let nginx: Subprocess | undefined;
  const members: Member[] = [];

  const stop = async () => {
    await Promise.all(
      members.map(async (m) => {
        m.proc.kill('SIGTERM');
        await Promise.race([m.proc.exited, Bun.sleep(15_000)]);
        m.proc.kill('SIGKILL');
      }),
    );
    nginx?.kill('SIGQUIT');
    if (nginx) await Promise.race([nginx.exited, Bun.sleep(5_000)]);
    nginx?.kill('SIGKILL');
    await redis?.stop();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    db = await startMariaDb({ bufferPoolMb: 256 });
    redis = await startRedis({ ownServer: true, persistent: true });
    const nginxPort = await freePort();
    const origin = `http://127.0.0.1:${nginxPort}`;
    const common: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      DATABASE_URL: await createDatabase(db.url, 'wfs'),
      REDIS_URL: redis.url,
      PROVIDER_MODE: 'sandbox',
      LOG_LEVEL: 'warn',
      // Behind nginx: sign-in limits count per client (X-Forwarded-For), not per proxy.
      TRUST_PROXY: '1',
      // The addresses people and clients use: the OAuth issuer, and the MCP resource its tokens are for.
      PUBLIC_URL: origin,
      MCP_RESOURCE_URL: `${origin}/mcp`,
      // On SIGTERM: 2 s of answering with `Connection: close` (nginx drops its idle connections after 1 s), then drain.
      SHUTDOWN_DELAY_MS: '2000',
      ...options.env,
    };

    const launch = (m: Omit<Member, 'proc'>): Subprocess => {
      const env: Record<string, string> = { ...common };
      if (m.role === 'api') Object.assign(env, { SERVE: 'rest', PORT: String(m.port) });
      if (m.role === 'mcp') Object.assign(env, { SERVE: 'mcp', MCP_PORT: String(m.port) });
      // One process creates the workspace of the bootstrap key: several at once would race for it.
      if (m.role === 'api' && m.index === 0) env.BOOTSTRAP_API_KEY = API_KEY;
      const script = m.role === 'worker' ? 'app/worker.ts' : 'app/main.ts';
      const log = openSync(join(logDir, `${m.role}-${m.index}.log`), 'a');
      try {
        return Bun.spawn(['bun', join(ROOT, script)], { cwd: ROOT, env, stdin: 'ignore', stdout: log, stderr: log });
      } finally {
        closeSync(log);
      }
    };
    const ready = async (m: Omit<Member, 'proc'>) => {
      if (m.role === 'worker') return Bun.sleep(1_000); // no port: it is up once its consumer runs
      await waitUntil(`${m.role}-${m.index} ready`, answers(`http://127.0.0.1:${m.port}/ready`));
    };
    const add = async (role: Role, index: number) => {
      const m = { role, index, port: role === 'worker' ? undefined : await freePort() };
      members.push({ ...m, proc: launch(m) });
      return m;
    };

    // The first API process migrates the database and creates the key's workspace; the rest follow.
    await ready(await add('api', 0));
    const rest: Omit<Member, 'proc'>[] = [];
    for (let i = 1; i < counts.api; i++) rest.push(await add('api', i));
    for (let i = 0; i < counts.mcp; i++) rest.push(await add('mcp', i));
    for (let i = 0; i < counts.worker; i++) rest.push(await add('worker', i));
    await Promise.all(rest.map(ready));

    const portsOf = (role: Role) => members.filter((m) => m.role === role).map((m) => m.port as number);
    const confDir = join(dir, 'nginx');
    mkdirSync(confDir);
    // nginx started as root runs its workers as `nobody`: they must reach and write their temp folders.
    chmodSync(dir, 0o755);
    for (const temp of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
      mkdirSync(join(confDir, temp));
      chmodSync(join(confDir, temp), 0o777);
    }
    writeFileSync(
      join(confDir, 'nginx.conf'),
      nginxConfig({ dir: confDir, port: nginxPort, apiPorts: portsOf('api'), mcpPorts: portsOf('mcp') }),
    );
    nginx = Bun.spawn(['nginx', '-p', confDir, '-c', join(confDir, 'nginx.conf')], { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe' });
    await waitUntil('nginx answering', answers(`${origin}/ready`), 10_000);

    return {
      restUrl: `${origin}/api/enterprise`,
      mcpUrl: `${origin}/mcp`,
      origin,
      databaseUrl: common.DATABASE_URL as string,
      apiKey: API_KEY,
      logDir,
      async restart(role, index) {
        const m = members.find((x) => x.role === role && x.index === index);
        if (!m) throw new Error(`no ${role}-${index} in this cluster`);
        const signalled = performance.now();
        m.proc.kill('SIGTERM');
        const exitCode = await m.proc.exited;
        m.proc = launch(m);
        await ready(m);
        return { exitCode, downMs: performance.now() - signalled };
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
