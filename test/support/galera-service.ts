import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { openStorage, type SqlStorage } from '../../adapters/storage/sql-storage.ts';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { type ClusterDatabase, startDatabase } from '../../scripts/cluster/database.ts';
import { Members, type Role } from '../../scripts/cluster/members.ts';
import type { GaleraCluster } from './galera.ts';
import { type RedisServer, startRedis } from './redis.ts';

/** The plan of the test workspace: API access, no row or request limits. */
const PLAN = 'galera';

export interface ServiceCluster {
  /** The Galera cluster (absent on one MariaDB). */
  galera?: GaleraCluster;
  /** The test's own connection to the cluster (hosts in the nodes' order), to set up and to check. */
  storage: SqlStorage;
  /** REST base URL of each API process (api-0 writes to node 1, api-1 to node 2). */
  rest: string[];
  /** MCP endpoint of the MCP process (it writes to node 3). */
  mcpUrl: string;
  key: string;
  workspaceId: string;
  logDir: string;
  /** Rows of a project on one node, read there alone (not through the cluster). */
  rowsOnNode(node: number, projectPk: number): Promise<number>;
  stop(): Promise<void>;
}

export interface GaleraService extends ServiceCluster {
  galera: GaleraCluster;
}

/** The service on a three-node Galera cluster (below). */
export async function startGaleraService(o: { apis?: number; workers?: number; credits: number }): Promise<GaleraService> {
  return (await startServiceCluster({ ...o, galera: true })) as GaleraService;
}

/**
 * The service as a Galera deployment runs it, for the fault tests and bench:cluster --galera: three
 * Galera nodes (or, without `galera`, one MariaDB: the same processes, for comparison), one Redis,
 * API processes (SERVE=rest), one MCP process and workers (`app/worker.ts`), each started by
 * scripts/cluster's Members with a DATABASE_URL listing every node, its own first (scripts/cluster/
 * database.ts: api-0 on node 1, api-1 and worker-0 on node 2, mcp-0 and worker-1 on node 3). A
 * workspace with an API key and `credits` is made first. Test plugins (PLUGINS_DIR) are loaded;
 * providers may listen on loopback.
 */
export async function startServiceCluster(o: {
  galera: boolean;
  apis?: number;
  workers?: number;
  credits: number;
}): Promise<ServiceCluster> {
  const logDir = mkdtempSync(join(tmpdir(), 'wfs-galera-logs-'));
  let db: ClusterDatabase | undefined;
  let redis: RedisServer | undefined;
  let storage: SqlStorage | undefined;
  let members: Members | undefined;
  const stop = async () => {
    await members?.stop();
    await storage?.close();
    await redis?.stop();
    await db?.stop();
    rmSync(logDir, { recursive: true, force: true });
  };
  try {
    db = await startDatabase({ galera: o.galera });
    const galera = db.galera;
    redis = await startRedis({ ownServer: true });
    storage = await openStorage(db.url, { migrate: true, poolSize: 4 });
    const ws = await storage.workspaces.create({ name: 'galera', plan: PLAN });
    const { api_key: key } = await issueApiKey(storage.workspaces, ws.id);
    await storage.credits.grant(ws.id, o.credits);
    members = new Members(serviceEnv(db.url, redis.url), logDir, {}, db.envOf);
    const counts: Record<Role, number> = { api: o.apis ?? 2, mcp: 1, worker: o.workers ?? 2 };
    await members.startAll(counts);
    const started = members;
    return {
      ...(galera ? { galera } : {}),
      storage,
      rest: started.portsOf('api').map((p) => `http://127.0.0.1:${p}/api/enterprise`),
      mcpUrl: `http://127.0.0.1:${started.portsOf('mcp')[0]}/mcp`,
      key,
      workspaceId: ws.id,
      logDir,
      rowsOnNode: (node, projectPk) => (galera ? rowsOnNode(galera, node, projectPk) : Promise.reject(new Error('one MariaDB: no nodes'))),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

function serviceEnv(databaseUrl: string, redisUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    PLUGINS_DIR: resolve(import.meta.dir, '../fixtures/plugins'),
    // The test providers listen on loopback.
    ALLOW_PRIVATE_NETWORK: '1',
    JOB_BACKOFF_MS: '200',
    JOB_MAX_ATTEMPTS: '50',
    PLANS_JSON: JSON.stringify({
      [PLAN]: { apiAccess: true, monthlyCredits: 0, maxProjects: null, maxRowsPerProject: null, requestsPerMinute: null },
    }),
  };
}

async function rowsOnNode(galera: GaleraCluster, node: number, projectPk: number): Promise<number> {
  const n = galera.nodes[node];
  if (!n) throw new Error(`no node ${node}`);
  const c = await createConnection({ host: '127.0.0.1', port: n.ports.client, user: 'root', database: 'wfs' });
  try {
    const [rows] = await c.query('SELECT COUNT(*) AS n FROM project_rows WHERE project_pk = ?', [projectPk]);
    return Number((rows as { n: number }[])[0]?.n);
  } finally {
    await c.end();
  }
}
