import { type Subprocess, spawn } from 'bun';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.ts';

/**
 * A throwaway Redis Sentinel set on loopback (docs/operations.md, "Redis Sentinel"): a primary, a
 * replica and three sentinels (quorum 2), each on a free port with its files in one temp dir, failing
 * over within a few seconds (down-after-milliseconds 1000). Every Redis needs the same password
 * (requirepass and masterauth), as a deployment with a password does. The Debian `redis-server`
 * package runs both roles (`redis-server <conf> --sentinel`). `bun run cluster --sentinel` uses it too.
 */
export interface SentinelSet {
  /** The name the sentinels watch the primary under. */
  name: string;
  password: string;
  /** What a service process needs: REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_PASSWORD. */
  env: Record<string, string>;
  /** The data nodes, the first primary first. */
  nodes: RedisNode[];
  /** The node the sentinels name as primary now. */
  primary(): Promise<RedisNode>;
  /**
   * Stops replication to every replica of the primary, deterministically: each replica is given a
   * wrong masterauth and its link cut, so it cannot sync again. Writes the primary acknowledges from
   * now on reach no replica: what a failover loses when replication lags.
   */
  cutReplication(): Promise<void>;
  /** How many bytes of the primary's replication stream its replicas lack (0: in sync). */
  replicationGap(): Promise<number>;
  /** kill -9 of the primary now; answers that node. */
  killPrimary(): Promise<RedisNode>;
  /** Waits until the sentinels name another primary than `old` and it answers as one; answers it. */
  waitForPromotion(old: RedisNode, timeoutMs?: number): Promise<RedisNode>;
  stop(): Promise<void>;
}

export interface RedisNode {
  port: number;
  /** redis://:password@127.0.0.1:port */
  url: string;
  alive(): boolean;
}

const NAME = 'wfs';
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 5_000;

function dataConf(o: { dir: string; port: number; password: string; replicaOf?: number }): string {
  return [
    `port ${o.port}`,
    'bind 127.0.0.1',
    `dir ${o.dir}`,
    'daemonize no',
    // AOF, fsync every second: what docs/operations.md advises; RDB snapshots off (the AOF is enough here).
    'appendonly yes',
    'appendfsync everysec',
    'save ""',
    'maxmemory-policy noeviction',
    `requirepass ${o.password}`,
    `masterauth ${o.password}`,
    // A replica syncs at once instead of waiting 5 s for others to share a diskless transfer.
    'repl-diskless-sync-delay 0',
    ...(o.replicaOf ? [`replicaof 127.0.0.1 ${o.replicaOf}`] : []),
    '',
  ].join('\n');
}

function sentinelConf(o: { dir: string; port: number; password: string; primaryPort: number }): string {
  return [
    `port ${o.port}`,
    'bind 127.0.0.1',
    `dir ${o.dir}`,
    'daemonize no',
    `sentinel monitor ${NAME} 127.0.0.1 ${o.primaryPort} 2`,
    `sentinel auth-pass ${NAME} ${o.password}`,
    `sentinel down-after-milliseconds ${NAME} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${NAME} ${FAILOVER_TIMEOUT_MS}`,
    `sentinel parallel-syncs ${NAME} 1`,
    '',
  ].join('\n');
}

/** One short-lived command on a node; its connection never retries (a dead node fails at once). */
async function ask(port: number, password: string | undefined, ...args: (string | number)[]): Promise<unknown> {
  const c = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return await c.call(String(args[0]), args.slice(1));
  } finally {
    c.disconnect();
  }
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

const infoField = (info: unknown, name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(String(info))?.[1]?.trim();

export async function startSentinelSet(options: { password?: string } = {}): Promise<SentinelSet> {
  const password = options.password ?? `sentinel-test-${Math.random().toString(36).slice(2, 10)}`;
  const dir = mkdtempSync(join(tmpdir(), 'wfs-sentinel-'));
  const procs = new Map<number, Subprocess>();
  const launch = (file: string, text: string, port: number, sentinel: boolean) => {
    writeFileSync(file, text);
    procs.set(port, spawn(['redis-server', file, ...(sentinel ? ['--sentinel'] : [])], { stdout: 'ignore', stderr: 'ignore' }));
  };
  const node = (port: number): RedisNode => ({
    port,
    url: `redis://:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    alive: () => procs.get(port)?.exitCode === null && !procs.get(port)?.killed,
  });
  const stop = async () => {
    for (const p of procs.values()) p.kill('SIGKILL');
    await Promise.all([...procs.values()].map((p) => p.exited));
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const ports = [freePort(), freePort()];
    const nodes = ports.map(node);
    for (const [i, port] of ports.entries()) {
      const nodeDir = join(dir, `node-${i}`);
      mkdirSync(nodeDir);
      const replicaOf = i === 0 ? undefined : ports[0];
      launch(join(nodeDir, 'redis.conf'), dataConf({ dir: nodeDir, port, password, ...(replicaOf ? { replicaOf } : {}) }), port, false);
    }
    await until(
      'the replica in sync',
      async () => infoField(await ask(ports[1] as number, password, 'INFO', 'replication'), 'master_link_status') === 'up',
      15_000,
    );

    const sentinelPorts = [freePort(), freePort(), freePort()];
    for (const [i, port] of sentinelPorts.entries()) {
      const sDir = join(dir, `sentinel-${i}`);
      mkdirSync(sDir);
      launch(join(sDir, 'sentinel.conf'), sentinelConf({ dir: sDir, port, password, primaryPort: ports[0] as number }), port, true);
    }
    // A failover needs a majority of sentinels that know each other and the replica (hello messages, every 2 s).
    for (const port of sentinelPorts) {
      await until(
        `sentinel ${port} knowing the others and the replica`,
        async () =>
          ((await ask(port, undefined, 'SENTINEL', 'sentinels', NAME)) as unknown[]).length === 2 &&
          ((await ask(port, undefined, 'SENTINEL', 'replicas', NAME)) as unknown[]).length === 1,
        20_000,
      );
    }

    const primaryPort = async (): Promise<number> => {
      for (const port of sentinelPorts) {
        const addr = (await ask(port, undefined, 'SENTINEL', 'get-master-addr-by-name', NAME).catch(() => null)) as string[] | null;
        if (addr) return Number(addr[1]);
      }
      throw new Error('no sentinel answers');
    };
    const nodeAt = (port: number) => nodes.find((n) => n.port === port) as RedisNode;
    const replicasOf = async (primary: RedisNode) => nodes.filter((n) => n !== primary && n.alive());

    return {
      name: NAME,
      password,
      env: {
        REDIS_SENTINELS: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
        REDIS_SENTINEL_NAME: NAME,
        REDIS_PASSWORD: password,
      },
      nodes,
      primary: async () => nodeAt(await primaryPort()),
      async cutReplication() {
        const primary = nodeAt(await primaryPort());
        for (const r of await replicasOf(primary)) {
          await ask(r.port, password, 'CONFIG', 'SET', 'masterauth', `not-${password}`);
          await ask(r.port, password, 'CLIENT', 'KILL', 'TYPE', 'master');
          await until(
            'the replica cut off',
            async () => infoField(await ask(r.port, password, 'INFO', 'replication'), 'master_link_status') === 'down',
            5_000,
          );
        }
      },
      async replicationGap() {
        const primary = nodeAt(await primaryPort());
        const head = Number(infoField(await ask(primary.port, password, 'INFO', 'replication'), 'master_repl_offset'));
        let gap = 0;
        for (const r of await replicasOf(primary)) {
          const at = Number(infoField(await ask(r.port, password, 'INFO', 'replication'), 'master_repl_offset') ?? 0);
          gap = Math.max(gap, head - at);
        }
        return gap;
      },
      async killPrimary() {
        const primary = nodeAt(await primaryPort());
        procs.get(primary.port)?.kill('SIGKILL');
        await procs.get(primary.port)?.exited;
        return primary;
      },
      async waitForPromotion(old, timeoutMs = 30_000) {
        let promoted: RedisNode | undefined;
        await until(
          'a replica promoted by the sentinels',
          async () => {
            const port = await primaryPort();
            if (port === old.port) return false;
            const role = (await ask(port, password, 'ROLE')) as unknown[];
            promoted = nodeAt(port);
            return role[0] === 'master';
          },
          timeoutMs,
        );
        return promoted as RedisNode;
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw new Error(
      `could not start the Redis Sentinel set (is redis-server installed? run scripts/setup-services.sh): ${(e as Error).message}`,
    );
  }
}
