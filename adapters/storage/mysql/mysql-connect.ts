import { CompiledQuery, type DatabaseConnection, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import { splitHosts } from './mysql-hosts.ts';
import { galeraSafeAdapter } from './mysql-migration-lock.ts';
import { NodePools } from './mysql-nodes.ts';

/** DATABASE_POOL_SIZE: connections per process to MySQL (default 32, one per concurrent request under load). */
function poolSizeFromEnv(): number {
  const n = Number(process.env.DATABASE_POOL_SIZE ?? 32);
  if (!Number.isInteger(n) || n < 1) throw new Error(`DATABASE_POOL_SIZE must be an integer >= 1, got "${process.env.DATABASE_POOL_SIZE}"`);
  return n;
}

/**
 * On a Galera node, reads wait until the node has applied every write the cluster committed before
 * them (wsrep_sync_wait=1: SELECT, SHOW and BEGIN): a worker reading on one node what an API process
 * wrote on another a moment ago sees it, as on a single server. Elsewhere the variable does nothing
 * (MariaDB outside a cluster) or does not exist (MySQL: error 1193, ignored).
 */
async function causalReads(connection: DatabaseConnection): Promise<void> {
  try {
    await connection.executeQuery(CompiledQuery.raw('SET SESSION wsrep_sync_wait = 1'));
  } catch (e) {
    if ((e as { errno?: number }).errno !== 1193) throw e;
  }
}

/**
 * Kysely over mysql2 (MySQL 8 or MariaDB 10.6+); `mariadb://` URLs are read as `mysql://`. Several
 * hosts (`mysql://u:p@h1:3306,h2:3306,h3:3306/db`, the nodes of a Galera cluster) get one pool each
 * behind NodePools, which sends each process's connections to the first live node listed.
 */
export function connectMysql(url: string, options: { poolSize?: number }): MysqlDialect {
  const settings = {
    connectionLimit: options.poolSize ?? poolSizeFromEnv(),
    charset: 'utf8mb4',
    // SUM()/COUNT() come back as DECIMAL; ask for plain numbers.
    decimalNumbers: true,
    supportBigNumbers: true,
    enableKeepAlive: true,
    // A database that is away answers fast (503), rather than holding requests for long.
    connectTimeout: 3_000,
  };
  const hosts = splitHosts(url.replace(/^mariadb:/, 'mysql:'));
  const pool = hosts.length > 1 ? new NodePools(hosts, settings) : createPool({ ...settings, uri: hosts[0] });
  const dialect = new MysqlDialect({ pool, onCreateConnection: causalReads });
  // Migrations take a lock the whole cluster sees (Kysely's own is GET_LOCK, which Galera does not replicate).
  return Object.assign(dialect, { createAdapter: () => galeraSafeAdapter(pool) });
}
