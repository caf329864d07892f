/**
 * `bun run bench:mcp`: tools/call latency of the MCP door beside the same operations over REST, in
 * one run on one service (SQLite in a temp dir by default; `--dialect mysql` starts a throwaway
 * MariaDB). Both doors are driven with plain fetch, so the figures compare the servers, not the
 * clients. Prints a markdown table; the target is MCP p50 within 1.3× of REST. Then the typical
 * agent flow in bytes and tokens (test/bench/mcp-flow.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStorage } from '../../adapters/storage/sql-storage.ts';
import { setLogLevel } from '../../core/log.ts';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { freePort } from '../support/free-port.ts';
import { createDatabase, startMariaDb } from '../support/mariadb.ts';
import { type Latency, summarize } from './measure.ts';
import { flowClient, flowPolling, flowTable, flowWithWaits, modernRpcPost, RECORD_COLUMNS, rpcPost, toolsListSize } from './mcp-flow.ts';

const { values: opts } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'sqlite' },
    requests: { type: 'string', default: '600' },
    rows: { type: 'string', default: '2000' },
  },
});
const REQUESTS = Number(opts.requests);
const CONCURRENCY = [1, 32];
const WARMUP = 50;

setLogLevel('warn');

async function databaseUrl(cleanup: (() => Promise<void>)[]): Promise<string> {
  if (opts.dialect === 'mysql') {
    const server = await startMariaDb();
    cleanup.push(() => server.stop());
    return createDatabase(server.url, `mcp_bench_${process.pid}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'wfs-mcp-bench-'));
  cleanup.push(async () => rmSync(dir, { recursive: true, force: true }));
  return `sqlite:${join(dir, 'bench.sqlite')}`;
}

/** Runs `total` calls with `concurrency` callers at once; adds each call's latency to `times`, returns the wall time. */
async function run(call: () => Promise<void>, concurrency: number, total: number, times: number[]): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const start = performance.now();
        await call();
        times.push(performance.now() - start);
      }
    }),
  );
  return performance.now() - t0;
}

/**
 * Measures the doors in alternating rounds (REST, MCP, MCP modern, REST, …), so a burst of
 * background load on a shared machine lands on each rather than on whichever ran at that moment.
 */
async function compare(doors: (() => Promise<void>)[], concurrency: number, total: number): Promise<(Latency & { rps: number })[]> {
  for (let i = 0; i < WARMUP; i++) for (const door of doors) await door();
  const rounds = 6;
  const times = doors.map((): number[] => []);
  const wall = doors.map(() => 0);
  for (let r = 0; r < rounds; r++) {
    for (const [i, door] of doors.entries())
      wall[i] = (wall[i] ?? 0) + (await run(door, concurrency, Math.ceil(total / rounds), times[i] ?? []));
  }
  return doors.map((_, i) => ({ ...summarize(times[i] ?? []), rps: (times[i]?.length ?? 0) / ((wall[i] ?? 1) / 1000) }));
}

/**
 * The service runs as its own process (`bun app/main.ts`, as `bun run start` does), so the
 * benchmark's client work does not share an event loop with the server it measures.
 */
async function startServer(env: Record<string, string>, cleanup: (() => Promise<void>)[]): Promise<{ rest: string; mcp: string }> {
  const [port, mcpPort] = [freePort(), freePort()];
  const proc = Bun.spawn(['bun', join(import.meta.dir, '../../app/main.ts')], {
    env: { ...process.env, ...env, PORT: String(port), MCP_PORT: String(mcpPort), LOG_LEVEL: 'info' },
    stdout: 'pipe',
    stderr: 'inherit',
  });
  cleanup.unshift(async () => {
    proc.kill('SIGTERM');
    await proc.exited;
  });
  const reader = proc.stdout.getReader();
  let out = '';
  const deadline = Date.now() + 30_000;
  while (!(out.includes('REST API listening') && out.includes('MCP server listening'))) {
    if (Date.now() > deadline) throw new Error(`the service did not start:\n${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`the service exited:\n${out}`);
    out += new TextDecoder().decode(value);
  }
  // Keep draining its log so the pipe never fills and blocks the server.
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return { rest: `http://127.0.0.1:${port}/api/enterprise`, mcp: `http://127.0.0.1:${mcpPort}/mcp` };
}

async function main(): Promise<void> {
  const cleanup: (() => Promise<void>)[] = [];
  try {
    const url = await databaseUrl(cleanup);
    const storage = await openStorage(url);
    cleanup.unshift(() => storage.close());
    const repo = storage.workspaces;
    const ws = await repo.create({ name: 'bench', plan: 'pro' });
    const { api_key: key } = await issueApiKey(repo, ws.id);
    // The flow's builder runs and paid tools spend credits.
    await storage.credits.grant(ws.id, 100_000, { note: 'bench' });
    const { rest, mcp } = await startServer({ PROVIDER_MODE: 'sandbox', DATABASE_URL: url }, cleanup);
    const headers = { 'service-api-key': key, accept: 'application/json' };

    // Data: 30 projects for the list, one of them with `rows` rows for the row pages.
    const companies = Array.from({ length: Number(opts.rows) }, (_, i) => `Company ${i + 1}`).join('\n');
    let projectId = '';
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${rest}/projects`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          builder_id: 'manual_list_builder',
          form_data: { companies: i === 0 ? companies : `Solo ${i}` },
          name: `Bench ${i}`,
        }),
      });
      const body = (await r.json()) as { project_id: string };
      if (i === 0) projectId = body.project_id;
    }
    for (;;) {
      const p = (await (await fetch(`${rest}/projects/${projectId}`, { headers })).json()) as {
        builder_status: { type: string };
        row_count: number;
      };
      if (p.builder_status.type === 'completed') break;
      await Bun.sleep(50);
    }

    // The plan's per-key request rate would throttle a benchmark: every measured cell gets a fresh
    // key (a fresh bucket), so both doors still pay for the rate check without being slowed by it.
    const freshKey = async () => (await issueApiKey(repo, ws.id)).api_key;
    const restCall = (path: string) => async (key: string) => {
      const r = await fetch(rest + path, { headers: { ...headers, 'service-api-key': key } });
      if (r.status !== 200) throw new Error(`REST ${path} answered ${r.status}`);
      await r.json();
    };
    const mcpCall =
      (name: string, args: Record<string, unknown>, era: 'legacy' | 'modern' = 'legacy') =>
      async (key: string) => {
        const r =
          era === 'legacy'
            ? await rpcPost(mcp, key, 'tools/call', { name, arguments: args })
            : await modernRpcPost(mcp, key, 'tools/call', { name, arguments: args });
        const body = (await r.json()) as { result?: { isError?: boolean } };
        if (r.status !== 200 || !body.result || body.result.isError)
          throw new Error(`MCP ${name} (${era}) failed: ${JSON.stringify(body).slice(0, 300)}`);
      };
    const rowsArgs = { project_id: projectId, page: 3, page_size: 50 };
    const cases = [
      {
        op: 'list_projects',
        rest: restCall('/projects?limit=50'),
        mcp: mcpCall('list_projects', { limit: 50 }),
        modern: mcpCall('list_projects', { limit: 50 }, 'modern'),
      },
      {
        op: 'get_project_rows',
        rest: restCall(`/projects/${projectId}/rows?page=3&page_size=50`),
        mcp: mcpCall('get_project_rows', rowsArgs),
        modern: mcpCall('get_project_rows', rowsArgs, 'modern'),
      },
    ];

    const lines = [
      `MCP vs REST, ${opts.dialect}, ${REQUESTS} calls per door and cell in 6 alternating rounds after ${WARMUP} warm-up calls; ${opts.rows} rows in the paged project, 30 projects listed; Bun ${Bun.version}, ${navigator.hardwareConcurrency} cores.`,
      '',
      'MCP = 2025-11-25 (legacy era); MCP 2026 = 2026-07-28 (modern era: version in _meta, Mcp-Method/Mcp-Name checked).',
      '',
      '| operation | concurrency | REST p50 ms | REST p95 ms | REST req/s | MCP p50 ms | MCP p95 ms | MCP req/s | MCP/REST p50 | MCP 2026 p50 ms | MCP 2026 p95 ms | MCP 2026/REST p50 |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ];
    const f = (n: number) => n.toFixed(2);
    for (const c of cases) {
      for (const concurrency of CONCURRENCY) {
        const [restKey, mcpKey, modernKey] = [await freshKey(), await freshKey(), await freshKey()];
        const [r, m, n] = (await compare(
          [() => c.rest(restKey), () => c.mcp(mcpKey), () => c.modern(modernKey)],
          concurrency,
          REQUESTS,
        )) as [Latency & { rps: number }, Latency & { rps: number }, Latency & { rps: number }];
        lines.push(
          `| ${c.op} | ${concurrency} | ${f(r.p50)} | ${f(r.p95)} | ${r.rps.toFixed(0)} | ${f(m.p50)} | ${f(m.p95)} | ${m.rps.toFixed(0)} | ${(m.p50 / r.p50).toFixed(2)}× | ${f(n.p50)} | ${f(n.p95)} | ${(n.p50 / r.p50).toFixed(2)}× |`,
        );
      }
    }
    console.log(lines.join('\n'));
    // The agent's flow, in what it reads (a fresh key: the flow's calls are not throttled by the rate).
    const flowKey = await freshKey();
    const call = flowClient(mcp, flowKey);
    console.log(`\n${flowTable(await flowWithWaits(call), await flowPolling(call), await toolsListSize(mcp, flowKey))}`);
    const records = await flowWithWaits(call, RECORD_COLUMNS);
    const recordRows = records.steps.at(-1);
    console.log(
      `\nThe same flow with record-valued columns (website_info, company_enrich): ${records.tokens.toLocaleString('en')} tokens, of which the 50 rows ${recordRows?.tokens.toLocaleString('en')} — ask fewer columns (columns_json) or fewer rows there.`,
    );
  } finally {
    for (const step of cleanup) await step().catch(() => {});
  }
}

await main();
process.exit(0);
