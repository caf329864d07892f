import type { GaleraCluster } from '../../test/support/galera.ts';

/** Each Galera node's address, process and health (cluster size, ready, state), to watch or kill by hand. */
export async function galeraLines(galera: GaleraCluster | undefined): Promise<string> {
  if (!galera) return '';
  const lines = await Promise.all(
    galera.nodes.map(async (n) => {
      const s = await n.status();
      const health = s ? `cluster size ${s.clusterSize}, wsrep_ready ${s.ready ? 'ON' : 'OFF'}, ${s.state}` : 'not answering';
      return `       ${n.name} ${n.address} (pid ${n.pid}, data ${n.dir}): ${health}`;
    }),
  );
  return `
galera DATABASE_URL=${galera.databaseUrl('wfs')} (each process lists its own node first)
${lines.join('\n')}`;
}
