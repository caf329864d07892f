import { type GaleraCluster, startGalera } from '../../test/support/galera.ts';
import { createDatabase, startMariaDb } from '../../test/support/mariadb.ts';
import type { Role } from './members.ts';

/** Where each role's first process writes on a Galera cluster; the next of the role, the node after. */
const FIRST_NODE: Record<Role, number> = { api: 0, worker: 1, mcp: 2 };

/** The reference cluster's database: one MariaDB, or a three-node Galera cluster. */
export interface ClusterDatabase {
  /** The `wfs` database, hosts in the nodes' order (for the admin CLI). */
  url: string;
  galera?: GaleraCluster;
  /** What one process's environment says of the database: on Galera, every node with its own first. */
  envOf(role: Role, index: number): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * With `galera`, the processes are spread over the nodes: each one's DATABASE_URL lists all three,
 * starting with the node it writes to while that node lives (api-0 on node 1, api-1 and worker-0 on
 * node 2, mcp-0 and worker-1 on node 3…), so losing one node moves some of each role.
 */
export async function startDatabase(options: { galera?: boolean }): Promise<ClusterDatabase> {
  if (!options.galera) {
    const db = await startMariaDb({ bufferPoolMb: 256 });
    try {
      const url = await createDatabase(db.url, 'wfs');
      return { url, envOf: () => ({}), stop: () => db.stop() };
    } catch (e) {
      await db.stop();
      throw e;
    }
  }
  const galera = await startGalera();
  try {
    const url = await galera.createDatabase('wfs');
    const size = galera.nodes.length;
    const orderFrom = (first: number) => Array.from({ length: size }, (_, k) => (first + k) % size);
    return {
      url,
      galera,
      envOf: (role, index) => ({ DATABASE_URL: galera.databaseUrl('wfs', orderFrom(FIRST_NODE[role] + index)) }),
      stop: () => galera.stop(),
    };
  } catch (e) {
    await galera.stop();
    throw e;
  }
}
