import { type FakeServer, startFakeServer } from '../support/fake-providers.ts';
import { type ServiceCluster, startServiceCluster } from '../support/galera-service.ts';
import { csvProject, progress, type Rest, restClient, until } from '../support/rest-steps.ts';
import { percentile } from './measure.ts';

/**
 * `bun run bench:cluster --galera`: the same processes (two API processes, an MCP process, two
 * workers, Redis) on one MariaDB and on a three-node Galera cluster (each process's DATABASE_URL
 * listing its own node first: api-0 writes to node 1, api-1 to node 2), in one run:
 * - POST rows: GALERA_BENCH_ROWS single-row inserts from 16 clients spread over both API processes;
 * - enrichment: a paid tool over GALERA_BENCH_CELLS rows (a provider on loopback answering at once), two workers;
 * - listing page 1 while api-0 keeps inserting: p50 through api-0 and through api-1 (on Galera
 *   another node than the writer's), and whether a row inserted through api-0 is listed at once
 *   through api-1 (replication lag visible or not);
 * - on Galera: node 2 killed with SIGKILL while both API processes insert — the time to the first
 *   successful write through each — and its return (IST) until Synced.
 * Exits 1 when a request failed or a count is off.
 */
const ROWS = Number(process.env.GALERA_BENCH_ROWS ?? 3_000);
const CELLS = Number(process.env.GALERA_BENCH_CELLS ?? 5_000);
const READS = Number(process.env.GALERA_BENCH_READS ?? 200);
const CONCURRENCY = 16;

interface Figures {
  rowsPerSecond: number;
  postP50: number;
  postP95: number;
  cellsPerSecond: number;
  listP50Writer: number;
  listP50Other: number;
  visibleAtOnce: string;
  death?: { firstWriteMs: number[]; syncedAfterMs: number };
  failures: string[];
}

const step = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

/** Inserts `count` rows one per request from CONCURRENCY clients, spread over `rests`; answers the latencies. */
async function insertRows(rests: Rest[], projectId: string, count: number, prefix: string, failures: string[]): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, c) => {
      const rest = rests[c % rests.length] as Rest;
      for (let n = next++; n < count; n = next++) {
        const t = performance.now();
        const r = await rest('POST', `/projects/${projectId}/rows`, { company: { Name: `${prefix}-${n}`, Key: `${prefix}-${n}` } });
        times.push(performance.now() - t);
        if (r.status !== 201) failures.push(`POST rows: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
    }),
  );
  return times.sort((a, b) => a - b);
}

async function enrichment(rest: Rest, provider: FakeServer, failures: string[]): Promise<number> {
  const csv = ['Name,Key', ...Array.from({ length: CELLS }, (_, i) => `Company ${i},key-${i}`)].join('\n');
  const projectId = await csvProject(rest, 'enrichment', csv);
  const column = await rest('POST', `/projects/${projectId}/columns`, {
    name: 'Found',
    tool_id: 'http_lookup',
    config: { url: `${provider.url}/lookup`, key: '{{Key}}' },
  });
  const started = performance.now();
  await rest('POST', `/projects/${projectId}/columns/run`, { col_ids: [column.body.col_id] });
  const done = await until('the enrichment', async () => {
    const p = await progress(rest, projectId);
    return p.completed + (p.error ?? 0) === CELLS ? p : undefined;
  });
  if (done.completed !== CELLS) failures.push(`enrichment: ${done.completed} of ${CELLS} cells completed`);
  return CELLS / ((performance.now() - started) / 1000);
}

/** Page 1 read through one API process after another, while api-0 inserts; and read-your-write across them. */
async function listing(rests: [Rest, Rest], projectId: string, failures: string[]) {
  let writing = true;
  const writer = (async () => {
    for (let n = 0; writing; n++) await rests[0]('POST', `/projects/${projectId}/rows`, { company: { Name: `bg-${n}`, Key: `bg-${n}` } });
  })();
  const p50 = async (rest: Rest) => {
    const times: number[] = [];
    for (let i = 0; i < READS; i++) {
      const t = performance.now();
      const r = await rest('GET', `/projects/${projectId}/rows?page=1&page_size=50`);
      times.push(performance.now() - t);
      if (r.status !== 200) failures.push(`GET rows: ${r.status}`);
    }
    return percentile(
      times.sort((a, b) => a - b),
      50,
    );
  };
  const listP50Writer = await p50(rests[0]);
  const listP50Other = await p50(rests[1]);
  writing = false;
  await writer;
  const { columns } = (await rests[0]('GET', `/projects/${projectId}`)).body as { columns: { name: string; col_id: string }[] };
  const nameCol = columns.find((c) => c.name === 'Name')?.col_id;
  let visible = 0;
  const tries = 50;
  for (let i = 0; i < tries; i++) {
    const name = `seen-${i}`;
    await rests[0]('POST', `/projects/${projectId}/rows`, { company: { Name: name, Key: name } });
    const filter = JSON.stringify([{ type: 'and', rules: [{ col_id: nameCol, operator: 'eq', value: name }] }]);
    const r = await rests[1]('GET', `/projects/${projectId}/rows?page_size=1&filter_groups=${encodeURIComponent(filter)}`);
    if (r.body?.total_rows === 1) visible++;
  }
  return { listP50Writer, listP50Other, visibleAtOnce: `${visible}/${tries}` };
}

/** Node 2 (api-1's) killed while both API processes insert: ms from the kill to each one's first write sent after it and answered 201. */
async function nodeDeath(s: ServiceCluster, rests: Rest[], projectId: string): Promise<{ firstWriteMs: number[]; syncedAfterMs: number }> {
  const galera = s.galera;
  if (!galera) throw new Error('no Galera cluster');
  let killedAt = Number.POSITIVE_INFINITY;
  const first = rests.map(() => Number.NaN);
  let running = true;
  const loops = rests.map(async (rest, i) => {
    for (let n = 0; running; n++) {
      const sent = performance.now();
      const r = await rest('POST', `/projects/${projectId}/rows`, { company: { Name: `death-${i}-${n}`, Key: `death-${i}-${n}` } });
      if (r.status === 201 && sent >= killedAt && Number.isNaN(first[i])) first[i] = performance.now() - killedAt;
    }
  });
  await Bun.sleep(1_000);
  await galera.kill(1);
  killedAt = performance.now();
  await until(
    'a write through each API process after the kill',
    async () => (first.every((f) => !Number.isNaN(f)) ? true : undefined),
    60_000,
  );
  await Bun.sleep(2_000);
  const restarting = performance.now();
  await galera.restart(1);
  const syncedAfterMs = performance.now() - restarting;
  running = false;
  await Promise.all(loops);
  return { firstWriteMs: first, syncedAfterMs };
}

async function measure(galera: boolean): Promise<Figures> {
  const failures: string[] = [];
  const provider = startFakeServer({ 'POST /lookup': (r) => Response.json({ values: (r.body.keys as string[]).map((k) => `v:${k}`) }) });
  step(`starting ${galera ? 'a 3-node Galera cluster' : 'one MariaDB'}, Redis, 2 API, 1 MCP, 2 workers`);
  const s = await startServiceCluster({ galera, credits: 10_000_000 });
  try {
    const rests = s.rest.map((base) => restClient(base, s.key)) as [Rest, Rest];
    const inserts = await csvProject(rests[0], 'inserts', 'Name,Key\nfirst,first');
    step(`POST rows: ${ROWS} rows, ${CONCURRENCY} clients over both API processes`);
    const t = performance.now();
    const times = await insertRows(rests, inserts, ROWS, 'row', failures);
    const rowsPerSecond = ROWS / ((performance.now() - t) / 1000);
    step(`enrichment of ${CELLS} cells`);
    const cellsPerSecond = await enrichment(rests[0], provider, failures);
    step(`listing page 1 (${READS} reads through each API process) while api-0 inserts`);
    const list = await listing(rests, inserts, failures);
    if (galera) step('kill -9 of node 2 while both API processes insert');
    const death = galera ? await nodeDeath(s, rests, inserts) : undefined;
    return {
      rowsPerSecond,
      postP50: percentile(times, 50),
      postP95: percentile(times, 95),
      cellsPerSecond,
      ...list,
      ...(death ? { death } : {}),
      failures,
    };
  } finally {
    await s.stop();
    provider.stop();
  }
}

export async function galeraBench(): Promise<void> {
  const one = await measure(false);
  const three = await measure(true);
  const row = (what: string, a: string, b: string) => console.log(`| ${what} | ${a} | ${b} |`);
  console.log(
    `\nbun run bench:cluster --galera — ${ROWS} POST rows (${CONCURRENCY} clients), ${CELLS} enriched cells, ${READS} listings per process`,
  );
  console.log('\n| | 1 node (MariaDB) | 3 nodes (Galera) |\n| --- | ---: | ---: |');
  row('POST rows, rows/s', one.rowsPerSecond.toFixed(0), three.rowsPerSecond.toFixed(0));
  row(
    'POST rows, p50 / p95 ms',
    `${one.postP50.toFixed(1)} / ${one.postP95.toFixed(1)}`,
    `${three.postP50.toFixed(1)} / ${three.postP95.toFixed(1)}`,
  );
  row('enrichment, cells/s', one.cellsPerSecond.toFixed(0), three.cellsPerSecond.toFixed(0));
  row("listing p50 ms, through the writer's process (api-0)", one.listP50Writer.toFixed(1), three.listP50Writer.toFixed(1));
  row('listing p50 ms, through the other (api-1; on Galera another node)', one.listP50Other.toFixed(1), three.listP50Other.toFixed(1));
  row('a row inserted through api-0 listed at once through api-1', one.visibleAtOnce, three.visibleAtOnce);
  if (three.death) {
    const [api0, api1] = three.death.firstWriteMs;
    console.log(
      `\nnode 2 killed (-9): first successful write ${api1?.toFixed(0)} ms after the kill through api-1 (its node), ${api0?.toFixed(0)} ms through api-0 (node 1); node 2 back and Synced ${(three.death.syncedAfterMs / 1000).toFixed(1)} s after its restart`,
    );
  }
  const failures = [...one.failures, ...three.failures];
  for (const f of [...new Set(failures)].slice(0, 10)) console.log(`failure: ${f}`);
  process.exit(failures.length ? 1 : 0);
}
