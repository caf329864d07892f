import { type Cluster, startCluster } from './cluster.ts';
import { galeraLines } from './galera-lines.ts';

/**
 * `bun run cluster`: the reference cluster on loopback (nginx, 2 API, 2 MCP, 3 workers, one MariaDB
 * and Redis), until Ctrl-C. CLUSTER_APIS, CLUSTER_MCPS and CLUSTER_WORKERS change the counts.
 * `--sentinel`: Redis as a primary, a replica and three sentinels (docs/operations.md, "Redis Sentinel").
 * `--galera`: MariaDB as a three-node Galera cluster (docs/operations.md, "MariaDB Galera Cluster").
 */
const count = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const sentinel = process.argv.includes('--sentinel');
const galera = process.argv.includes('--galera');
console.log(
  `starting ${galera ? 'a 3-node Galera cluster' : 'MariaDB'}, ${sentinel ? 'Redis with Sentinel' : 'Redis'}, the processes and nginx…`,
);
const cluster = await startCluster({
  apis: count('CLUSTER_APIS', 2),
  mcps: count('CLUSTER_MCPS', 2),
  workers: count('CLUSTER_WORKERS', 3),
  sentinel,
  galera,
});
console.log(`
REST   ${cluster.restUrl}   (docs: ${cluster.restUrl}/docs)
MCP    ${cluster.mcpUrl}
health ${cluster.origin}/health  ready ${cluster.origin}/ready  metrics ${cluster.origin}/metrics
key    service-api-key: ${cluster.apiKey}
logs   ${cluster.logDir}${sentinelLines(cluster)}${await galeraLines(cluster.galera)}
Ctrl-C stops everything and removes its data.`);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  console.log('stopping…');
  await cluster.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

/** Where the Sentinel set is, to watch or fail it over by hand (redis-cli -p <port> SENTINEL …). */
function sentinelLines(cluster: Cluster): string {
  const s = cluster.sentinel;
  if (!s) return '';
  return `
redis  ${Object.entries(s.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}
       data nodes on ports ${s.nodes.map((n) => n.port).join(', ')}`;
}
