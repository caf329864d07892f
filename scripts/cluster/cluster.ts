import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { freePort } from '../../test/support/free-port.ts';
import type { GaleraCluster } from '../../test/support/galera.ts';
import { type RedisServer, startRedis } from '../../test/support/redis.ts';
import { type SentinelSet, startSentinelSet } from '../../test/support/sentinel.ts';
import { type ClusterDatabase, startDatabase } from './database.ts';
import { answers, Members, type Role, waitUntil } from './members.ts';
import { nginxConfig } from './nginx-config.ts';

/**
 * The reference cluster (docs/scaling.md) on loopback: one MariaDB and one Redis, API,
 * MCP and worker processes as a deployment runs them (`app/main.ts` with SERVE=rest|mcp,
 * `app/worker.ts`), and nginx (the Debian package, as a plain process) in front.
 */
export type { Role } from './members.ts';

export interface ClusterOptions {
  apis?: number;
  mcps?: number;
  workers?: number;
  /** Extra environment of every process (e.g. PLUGINS_DIR). */
  env?: Record<string, string>;
  /** Redis as a primary, a replica and three sentinels (test/support/sentinel.ts) instead of one server. */
  sentinel?: boolean;
  /** A three-node MariaDB Galera cluster (test/support/galera.ts) instead of one MariaDB, the processes spread over its nodes. */
  galera?: boolean;
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
  /** The Redis Sentinel set, with `sentinel: true` (to kill its primary). */
  sentinel?: SentinelSet;
  /** The Galera cluster, with `galera: true` (to kill and restart its nodes). */
  galera?: GaleraCluster;
  /** SIGTERM to one process, wait for its exit (a graceful one answers what it holds), start it again on the same port. */
  restart(role: Role, index: number): Promise<{ exitCode: number | null; downMs: number }>;
  stop(): Promise<void>;
}

const API_KEY = 'wfs_cluster_reference_key_0123456789abcdef';

/** The environment every process of the cluster shares. */
function sharedEnv(dir: string, origin: string, databaseUrl: string, redisEnv: Record<string, string>, extra: Record<string, string> = {}) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    DATABASE_URL: databaseUrl,
    ...redisEnv,
    PROVIDER_MODE: 'sandbox',
    LOG_LEVEL: 'warn',
    // Behind nginx: sign-in limits count per client (X-Forwarded-For), not per proxy.
    TRUST_PROXY: '1',
    // The addresses people and clients use: the OAuth issuer, and the MCP resource its tokens are for.
    PUBLIC_URL: origin,
    MCP_RESOURCE_URL: `${origin}/mcp`,
    // On SIGTERM: 2 s of answering with `Connection: close` (nginx drops its idle connections after 1 s), then drain.
    SHUTDOWN_DELAY_MS: '2000',
    ...extra,
  };
}

/** nginx (the Debian package, as a plain process) in front of the API and MCP processes. */
async function startNginx(dir: string, port: number, members: Members): Promise<Subprocess> {
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
    nginxConfig({ dir: confDir, port, apiPorts: members.portsOf('api'), mcpPorts: members.portsOf('mcp') }),
  );
  const nginx = Bun.spawn(['nginx', '-p', confDir, '-c', join(confDir, 'nginx.conf')], {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'pipe',
  });
  await waitUntil('nginx answering', answers(`http://127.0.0.1:${port}/ready`), 10_000);
  return nginx;
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const counts: Record<Role, number> = { api: options.apis ?? 2, mcp: options.mcps ?? 2, worker: options.workers ?? 3 };
  const dir = mkdtempSync(join(tmpdir(), 'wfs-cluster-'));
  const logDir = join(dir, 'logs');
  mkdirSync(logDir);
  let db: ClusterDatabase | undefined;
  let redis: RedisServer | undefined;
  let sentinel: SentinelSet | undefined;
  let nginx: Subprocess | undefined;
  let members: Members | undefined;

  const stop = async () => {
    await members?.stop();
    nginx?.kill('SIGQUIT');
    if (nginx) await Promise.race([nginx.exited, Bun.sleep(5_000)]);
    nginx?.kill('SIGKILL');
    await redis?.stop();
    await sentinel?.stop();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    db = await startDatabase(options);
    if (options.sentinel) sentinel = await startSentinelSet();
    else redis = await startRedis({ ownServer: true, persistent: true });
    const redisEnv = sentinel ? sentinel.env : { REDIS_URL: (redis as RedisServer).url };
    const nginxPort = await freePort();
    const origin = `http://127.0.0.1:${nginxPort}`;
    const env = sharedEnv(dir, origin, db.url, redisEnv, options.env);
    // One process creates the workspace of the bootstrap key: several at once would race for it.
    const started = new Members(env, logDir, { BOOTSTRAP_API_KEY: API_KEY }, db.envOf);
    members = started;
    await started.startAll(counts);
    nginx = await startNginx(dir, nginxPort, started);
    return {
      restUrl: `${origin}/api/enterprise`,
      mcpUrl: `${origin}/mcp`,
      origin,
      databaseUrl: env.DATABASE_URL,
      apiKey: API_KEY,
      logDir,
      ...(sentinel ? { sentinel } : {}),
      ...(db.galera ? { galera: db.galera } : {}),
      restart: (role, index) => started.restart(role, index),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
