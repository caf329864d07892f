import { startCluster } from './cluster.ts';

/**
 * `bun run cluster`: the reference cluster on loopback (nginx, 2 API, 2 MCP, 3 workers, one MariaDB
 * and Redis), until Ctrl-C. CLUSTER_APIS, CLUSTER_MCPS and CLUSTER_WORKERS change the counts.
 */
const count = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
console.log('starting MariaDB, Redis, the processes and nginx…');
const cluster = await startCluster({
  apis: count('CLUSTER_APIS', 2),
  mcps: count('CLUSTER_MCPS', 2),
  workers: count('CLUSTER_WORKERS', 3),
});
console.log(`
REST   ${cluster.restUrl}   (docs: ${cluster.restUrl}/docs)
MCP    ${cluster.mcpUrl}
health ${cluster.origin}/health  ready ${cluster.origin}/ready  metrics ${cluster.origin}/metrics
key    service-api-key: ${cluster.apiKey}
logs   ${cluster.logDir}
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
