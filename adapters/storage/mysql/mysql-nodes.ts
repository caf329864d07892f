import type { MysqlPool, MysqlPoolConnection } from 'kysely';
import { createPool, type Pool, type PoolConnection, type PoolOptions } from 'mysql2';
import { mysqlErrors } from './mysql-errors.ts';

/** How often a node taken out of use is tried again (connect, then ask whether it takes writes). */
const PROBE_MS = 500;

interface Node {
  readonly pool: Pool;
  /** Out of use: a connection to it failed, broke, or it said it cannot serve (not synced, not in the majority). */
  down: boolean;
  probe?: ReturnType<typeof setTimeout>;
}

/**
 * One mysql2 pool per node of a cluster (`DATABASE_URL` naming several hosts), as the one pool
 * Kysely's MysqlDialect takes. A connection comes from the first node, in the order listed, that is
 * in use: each process writes to one node while it lives (fewer certification conflicts than
 * spreading one process's writes), and moves at once to the next when that node cannot connect,
 * drops a connection, or answers that it is not ready (Galera's 1047 while joining or cut off from
 * the majority). A node out of use is probed in the background and taken back once it answers and
 * says it is Synced, so no request waits on a dead host's connect timeout.
 *
 * mysql2's PoolCluster fails over on connect errors only: a node that accepts connections but
 * refuses statements (a Galera joiner) would keep getting them.
 */
export class NodePools implements MysqlPool {
  private readonly nodes: Node[];
  private readonly wrapped = new WeakMap<PoolConnection, MysqlPoolConnection>();
  private closed = false;

  constructor(urls: string[], options: Omit<PoolOptions, 'uri'>) {
    this.nodes = urls.map((uri) => ({ pool: createPool({ ...options, uri }), down: false }));
  }

  getConnection(callback: (error: unknown, connection: MysqlPoolConnection) => void): void {
    this.acquire().then(
      (c) => callback(null, c),
      (e) => callback(e, undefined as never),
    );
  }

  end(callback: (error: unknown) => void): void {
    this.closed = true;
    for (const node of this.nodes) clearTimeout(node.probe);
    Promise.all(this.nodes.map((n) => n.pool.promise().end())).then(
      () => callback(null),
      (e) => callback(e),
    );
  }

  /** Nodes in use first, in the order listed; when none is, every node (one may be back before its probe says so). */
  private async acquire(): Promise<MysqlPoolConnection> {
    const inUse = this.nodes.filter((n) => !n.down);
    let last: unknown = new Error('no database node to connect to');
    for (const node of inUse.length ? inUse : this.nodes) {
      try {
        return this.wrap(node, await connectionOf(node.pool));
      } catch (e) {
        last = e;
        this.takeOut(node);
      }
    }
    throw last;
  }

  /** The connection Kysely holds: mysql2's, with each query's error telling whether its node failed. */
  private wrap(node: Node, raw: PoolConnection): MysqlPoolConnection {
    let c = this.wrapped.get(raw);
    if (!c) {
      const seen = (e: unknown) => {
        if (e && (mysqlErrors.notRun(e) || mysqlErrors.isConnectionLost(e))) this.takeOut(node);
      };
      c = {
        get config() {
          return raw.config;
        },
        get threadId() {
          return raw.threadId;
        },
        connect: (cb) => raw.connect(cb ?? (() => undefined)),
        destroy: () => raw.destroy(),
        release: () => raw.release(),
        // biome-ignore lint/suspicious/noExplicitAny: mysql2's parameter and result types, passed through
        query: (sql: string, parameters: any, cb?: (error: unknown, result: any) => void) => {
          if (!cb) return raw.query(sql, parameters);
          return raw.query(sql, parameters, (e, result) => {
            seen(e);
            cb(e, result);
          });
        },
      } as MysqlPoolConnection;
      this.wrapped.set(raw, c);
    }
    return c;
  }

  private takeOut(node: Node): void {
    if (node.down || this.closed) return;
    node.down = true;
    const probe = async () => {
      if (this.closed) return;
      if (await ready(node.pool)) node.down = false;
      else node.probe = setTimeout(probe, PROBE_MS).unref();
    };
    node.probe = setTimeout(probe, PROBE_MS).unref();
  }
}

function connectionOf(pool: Pool): Promise<PoolConnection> {
  return new Promise((resolve, reject) => pool.getConnection((e, c) => (e ? reject(e) : resolve(c))));
}

/**
 * Connects and asks the node whether it serves: ready and Synced (wsrep_local_state 4), as HAProxy's
 * clustercheck asks. A restarted node says it is ready as soon as it is back in the primary
 * component, before its state transfer: a commit there fails. A server outside a cluster has no
 * such status, and serves.
 */
async function ready(pool: Pool): Promise<boolean> {
  try {
    const c = await connectionOf(pool);
    try {
      const [rows] = await c.promise().query("SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state')");
      const status = new Map((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, r.Value]));
      return status.size === 0 || (status.get('wsrep_ready') === 'ON' && status.get('wsrep_local_state') === '4');
    } finally {
      c.release();
    }
  } catch {
    return false;
  }
}
