import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Cluster, type Role, startCluster } from '../../scripts/cluster/cluster.ts';
import { galeraBench } from './galera-bench.ts';
import { percentile } from './measure.ts';

/**
 * `bun run bench:cluster`: the reference cluster (scripts/cluster/) under a fixed mixed load —
 * listing, filtering, inserting through nginx, MCP tool calls, and an enrichment of every row —
 * while one API, one MCP and one worker process are restarted (SIGTERM, then started again).
 * Prints requests/s, p50/p99 and errors per operation; exits 1 on any error, lost row or lost cell.
 */
const SECONDS = Number(process.env.CLUSTER_BENCH_SECONDS ?? 60);
const CONCURRENCY = Number(process.env.CLUSTER_BENCH_CONCURRENCY ?? 16);
const SEED_ROWS = Number(process.env.CLUSTER_BENCH_ROWS ?? 5_000);
const OPS = ['list page 1', 'filter contains', 'insert row', 'MCP get_project_rows'] as const;
type Op = (typeof OPS)[number];

const step = (msg: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<void> {
  step('starting the reference cluster: MariaDB, Redis, 2 API, 2 MCP, 3 workers, nginx');
  // One key drives every client: its plan's per-minute request limit is lifted for the bench.
  const cluster = await startCluster({ env: { PLANS_JSON: JSON.stringify({ pro: { requestsPerMinute: null } }) } });
  let failed = false;
  try {
    failed = await run(cluster);
  } finally {
    await cluster.stop();
  }
  process.exit(failed ? 1 : 0);
}

async function run(cluster: Cluster): Promise<boolean> {
  const headers = { 'service-api-key': cluster.apiKey };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${cluster.restUrl}${path}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    // nginx answers its own errors in HTML: keep them readable.
    const json = res.headers.get('content-type')?.includes('json');
    return { status: res.status, body: json && text ? JSON.parse(text) : text || null };
  };
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  // The table: a project of SEED_ROWS rows, loaded through rows/batch as a user would.
  const { project_id: projectId } = await must('POST', '/projects', {
    builder_id: 'manual_list_builder',
    form_data: { companies: 'Seed' },
    name: 'cluster bench',
  });
  for (;;) {
    const p = await must('GET', `/projects/${projectId}`);
    if (p.builder_status.type === 'completed') break;
    await Bun.sleep(100);
  }
  const company = (n: number) => ({ Name: `Company ${n}`, Domain: `https://www.company${n}.example/about` });
  for (let n = 0; n < SEED_ROWS; n += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, SEED_ROWS - n) }, (_, i) => company(n + i));
    await must('POST', `/projects/${projectId}/rows/batch`, { rows });
  }
  const { columns } = await must('GET', `/projects/${projectId}`);
  const nameCol = columns.find((c: { name: string }) => c.name === 'Name').col_id as string;
  // The enrichment: every row's domain, run by the workers while the load goes on (rows added meanwhile too).
  const tool = await must('POST', `/projects/${projectId}/columns`, {
    name: 'Registrable domain',
    tool_id: 'domain_normalizer',
    config: { value: '{{Domain}}' },
    auto_run: true,
  });
  const { queued } = await must('POST', `/projects/${projectId}/columns/run`, { col_ids: [tool.col_id] });
  step(`project of ${SEED_ROWS + 1} rows loaded; enrichment of ${queued} cells started`);

  const times = new Map<Op, number[]>(OPS.map((op) => [op, []]));
  const errors = new Map<Op, string[]>(OPS.map((op) => [op, []]));
  let inserted = 0;
  let next = SEED_ROWS;
  const clients = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new Client({ name: 'cluster-bench', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(cluster.mcpUrl), { requestInit: { headers } }));
      return client;
    }),
  );
  const calls: Record<Op, (client: Client) => Promise<void>> = {
    'list page 1': async () => {
      const r = await api('GET', `/projects/${projectId}/rows?page=1&page_size=50`);
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    },
    'filter contains': async () => {
      const filter = [{ type: 'and', rules: [{ col_id: nameCol, operator: 'contains', value: `ny ${Math.floor(Math.random() * 50)}` }] }];
      const r = await api('GET', `/projects/${projectId}/rows?page_size=50&filter_groups=${encodeURIComponent(JSON.stringify(filter))}`);
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    },
    'insert row': async () => {
      const r = await api('POST', `/projects/${projectId}/rows`, { company: company(next++) });
      if (r.status >= 300) throw new Error(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      inserted++;
    },
    'MCP get_project_rows': async (client) => {
      const result = (await client.callTool({ name: 'get_project_rows', arguments: { project_id: projectId, page_size: 20 } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      if (result.isError) throw new Error(result.content[0]?.text.slice(0, 200));
    },
  };

  // The load, with one API, one MCP and one worker restarted one after the other.
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  const restarts: { role: Role; exitCode: number | null; downMs: number }[] = [];
  const schedule = (async () => {
    for (const [role, at] of [
      ['api', 0.2],
      ['mcp', 0.45],
      ['worker', 0.7],
    ] as const) {
      await Bun.sleep(Math.max(0, started + at * SECONDS * 1000 - performance.now()));
      step(`restarting ${role}-0 (SIGTERM, then start again)`);
      restarts.push({ role, ...(await cluster.restart(role, 0)) });
    }
  })();
  step(`mixed load: ${CONCURRENCY} clients for ${SECONDS} s`);
  await Promise.all(
    clients.map(async (client, i) => {
      for (let k = i; performance.now() < deadline; k++) {
        const op = OPS[k % OPS.length] as Op;
        const t = performance.now();
        try {
          await calls[op](client);
          times.get(op)?.push(performance.now() - t);
        } catch (e) {
          errors.get(op)?.push((e as Error).message);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await schedule;
  await Promise.all(clients.map((c) => c.close()));

  // Nothing lost: every accepted row is there, and every cell of the enriched column completes.
  const expectedRows = 1 + SEED_ROWS + inserted;
  // Settled: any status but queued, running or pending (a row without a domain ends `skipped`, not lost).
  const done = [
    { type: 'and', rules: [{ col_id: tool.col_id, field: 'status', operator: 'not_in', value: ['queued', 'running', 'pending'] }] },
  ];
  let completed = 0;
  let total = 0;
  const waitUntil = Date.now() + 180_000;
  while (Date.now() < waitUntil) {
    total = (await must('GET', `/projects/${projectId}/rows?page_size=1`)).total_rows;
    completed = (await must('GET', `/projects/${projectId}/rows?page_size=1&filter_groups=${encodeURIComponent(JSON.stringify(done))}`))
      .total_rows;
    if (completed >= total) break;
    await Bun.sleep(500);
  }

  console.log(`\nbun run bench:cluster — ${CONCURRENCY} clients, ${elapsed.toFixed(0)} s, through nginx; restarts meanwhile:`);
  for (const r of restarts) console.log(`  ${r.role}-0: exit code ${r.exitCode}, back after ${(r.downMs / 1000).toFixed(1)} s`);
  console.log('\n| operation | requests | req/s | p50 ms | p99 ms | errors |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  let allErrors = 0;
  for (const op of OPS) {
    const sorted = [...(times.get(op) ?? [])].sort((a, b) => a - b);
    const errs = errors.get(op) ?? [];
    allErrors += errs.length;
    const n = sorted.length + errs.length;
    console.log(
      `| ${op} | ${n} | ${(n / elapsed).toFixed(0)} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} | ${errs.length} |`,
    );
  }
  for (const op of OPS) for (const e of [...new Set(errors.get(op))].slice(0, 3)) console.log(`  ${op} error: ${e}`);
  const lostRows = expectedRows - total;
  const lostCells = total - completed;
  console.log(`\nrows: ${total} of ${expectedRows} expected (${inserted} inserted under load); lost rows: ${lostRows}`);
  console.log(`enriched cells settled: ${completed} of ${total}; lost cells: ${lostCells}`);
  const badExit = restarts.filter((r) => r.exitCode !== 0).length;
  if (badExit) console.log(`${badExit} restarted process(es) did not exit 0`);
  return allErrors > 0 || lostRows !== 0 || lostCells !== 0 || badExit > 0;
}

// --galera: one MariaDB beside a three-node Galera cluster (galera-bench.ts).
if (process.argv.includes('--galera')) await galeraBench();
else await main();
