import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { freePort } from './free-port.ts';
import { GaleraNode, type GaleraPorts } from './galera-node.ts';

export { GaleraNode } from './galera-node.ts';

/**
 * A throwaway MariaDB Galera cluster for tests, benchmarks and `bun run cluster --galera`: three
 * (or `size`) mariadbd processes on loopback, each with its own temp dir and free ports, bootstrapped
 * by the first and joined by the others. Needs Debian's `mariadb-server`, `galera-4` and `rsync`
 * (scripts/setup-services.sh installs them).
 */
export interface GaleraCluster {
  nodes: GaleraNode[];
  /** `mysql://root@h1:p1,h2:p2,h3:p3/<database>` with the nodes in `order` (the first is the one a process writes to while it lives). */
  databaseUrl(database: string, order?: number[]): string;
  /** Creates a database (replicated to every node) and answers its URL in the default order. */
  createDatabase(name: string): Promise<string>;
  /** kill -9 of one node; the others go on as a cluster of the rest. */
  kill(index: number): Promise<void>;
  /** Starts a killed (or stopped) node again from its data and waits until it is Synced (IST, or SST when IST cannot serve). */
  restart(index: number): Promise<void>;
  /** Waits until every running node is Synced in a cluster of all running nodes. */
  waitSynced(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function portsOfNode(): GaleraPorts {
  // IST and SST ports are bound only when a transfer starts, the client port of a joiner after it:
  // free-port.ts takes them below the ephemeral range for that.
  return { client: freePort(), gcomm: freePort(), ist: freePort(), sst: freePort() };
}

export async function startGalera(options: { size?: number; bufferPoolMb?: number } = {}): Promise<GaleraCluster> {
  const size = options.size ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'wfs-galera-'));
  // The nodes run as `mysql` when started by root: they must reach their folders inside this one.
  chmodSync(dir, 0o755);
  const ports = Array.from({ length: size }, portsOfNode);
  const nodes = ports.map((p, i) => new GaleraNode(i, join(dir, `node${i + 1}`), p, ports));
  for (const node of nodes) node.prepare({ bufferPoolMb: options.bufferPoolMb ?? 256 });
  const running = () => nodes.filter((n) => n.running);
  const waitSynced = async (timeoutMs?: number) => {
    const up = running();
    await Promise.all(up.map((n) => n.waitSynced(up.length, timeoutMs)));
  };
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await bootstrap(nodes);
    await waitSynced();
  } catch (e) {
    // The joiners' logs tell why a state transfer did not end: gather them before the folder goes.
    const logs = nodes.map((n) => `--- ${n.name}\n${n.logTail(15)}`).join('\n');
    await stop();
    throw new Error(`${(e as Error).message}\n${logs}`);
  }
  const [first] = nodes as [GaleraNode];
  const databaseUrl = (database: string, order = nodes.map((n) => n.index)) =>
    `mysql://root@${order.map((i) => nodes[i]?.address).join(',')}/${database}`;
  return {
    nodes,
    databaseUrl,
    async createDatabase(name) {
      const c = await createConnection({ host: '127.0.0.1', port: first.ports.client, user: 'root' });
      await c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      await c.end();
      return databaseUrl(name);
    },
    kill: (index) => nodeAt(nodes, index).kill(),
    async restart(index) {
      const node = nodeAt(nodes, index);
      if (node.running) throw new Error(`${node.name} is running`);
      for (let attempt = 1; ; attempt++) {
        const marks = nodes.map((n) => n.logLength());
        node.start({ position: node.recoverPosition() });
        const stalled = async () => (await Promise.all(nodes.map((n, i) => n.logSince(marks[i] ?? 0)))).some((t) => t.includes(STALLED));
        if ((await node.waitSynced(running().length, undefined, stalled)) === 'synced') return;
        if (attempt >= 3) throw new Error(`${node.name}'s state exchange stalled ${attempt} times`);
        await node.kill();
      }
    },
    waitSynced,
    stop,
  };
}

/**
 * What a member logs when the state exchange of a new view could not start and waits for the next
 * one ("…will try again in next primary component"): with nothing else changing, the joiner and the
 * cluster's commits wait for good. Seen on the loaded 2-core test machine as a node rejoined; a new
 * configuration change ends it, so the joiner is stopped and started again, as an operator would.
 */
const STALLED = 'Temporary failure in sending state UUID';

function nodeAt(nodes: GaleraNode[], index: number): GaleraNode {
  const node = nodes[index];
  if (!node) throw new Error(`no node ${index} in a cluster of ${nodes.length}`);
  return node;
}

/**
 * The first node makes a new cluster on a fresh data dir; the others join it and receive its data
 * by SST (rsync), one after the other (a node donates to one joiner at a time).
 */
async function bootstrap(nodes: GaleraNode[]): Promise<void> {
  const [first, ...others] = nodes as [GaleraNode, ...GaleraNode[]];
  first.install();
  first.start({ bootstrap: true });
  await first.waitSynced(1);
  for (const node of others) node.start();
}
