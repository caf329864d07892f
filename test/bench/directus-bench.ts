import { closeSync, mkdirSync, openSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import type { SqlStorage } from '../../adapters/storage/sql-storage.ts';
import { setLogLevel } from '../../core/log.ts';
import { createDatabase, startMariaDb } from '../support/mariadb.ts';
import { startRedis } from '../support/redis.ts';
import { type DirectusPeer, DIRECTUS_VERSION, directusItem, ensureDirectus, startDirectus } from './directus-peer.ts';
import { type Api, getRows, postRow } from './http-client.ts';
import { CleanupSteps } from './jobs-cleanup.ts';
import { type Latency, summarize } from './measure.ts';
import { type BenchCase, benchCases, httpQuery, PAGE_SIZE } from './rows-cases.ts';
import { companyBody, NAME_NEEDLE } from './rows-dataset.ts';
import { step } from './rows-listing.ts';
import { createBenchProject, seedOverHttp } from './seed.ts';
import { startServiceProcess } from './service-process.ts';

/**
 * `bun run bench:directus`: the Workflow Service in production mode (`start:api` in its own process,
 * MariaDB + Redis) beside Directus 12 on the same MariaDB server, the same companies loaded through
 * each one's API (batches of 1,000, then single rows 16 at a time), the same listings asked of both
 * in interleaved rounds, both counting the matches. Then the same again with one row inserted into
 * each before every request. Prints a markdown table; writes .bench/directus.json.
 *
 * Knobs (env): BENCH_ROWS=100000  BENCH_SEED_SINGLES=10000  BENCH_ROUNDS=30  DIRECTUS_DIR=.bench/directus
 * DIRECTUS_VERSION=12.3.1
 */

const num = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(n) || n < 1) throw new Error(`${name} must be a positive number`);
  return n;
};
const ROWS = num('BENCH_ROWS', 100_000);
const SINGLES = Math.min(ROWS, num('BENCH_SEED_SINGLES', 10_000));
const ROUNDS = num('BENCH_ROUNDS', 30);
const WARMUP_ROUNDS = 3;
const ROOT = resolve(import.meta.dir, '../..');
const OUT = join(ROOT, '.bench');

/** One listing asked of both: the service's query string and Directus's. */
interface Shape {
  label: string;
  page: number | 'last';
  ours: string;
  theirs: (page: number) => string;
  c: BenchCase;
}

function shapes(cases: BenchCase[]): Shape[] {
  const filter = `filter=${encodeURIComponent(JSON.stringify({ name: { _contains: NAME_NEEDLE } }))}`;
  const directus = (c: BenchCase) => (page: number) =>
    [`limit=${PAGE_SIZE}`, `page=${page}`, c.filterGroups ? filter : '', c.sortRules ? 'sort=employees' : ''].filter(Boolean).join('&');
  const out: Shape[] = [];
  for (const c of cases) {
    const pages: (number | 'last')[] = c.filterGroups ? [1, 'last'] : [1, 500];
    for (const page of pages) out.push({ label: c.label, page, ours: '', theirs: directus(c), c });
  }
  return out;
}

interface Row {
  label: string;
  page: number;
  ours: Latency;
  directus: Latency;
}

async function ourService(
  databaseUrl: string,
  redisUrl: string,
  logPath: string,
  cleanup: CleanupSteps,
): Promise<Api & { storage: SqlStorage; workspaceId: string }> {
  const log = openSync(logPath, 'a');
  const service = await startServiceProcess({ databaseUrl, redisUrl, output: log }).finally(() => closeSync(log));
  cleanup.add(() => service.stop());
  return { ...service.api, storage: service.storage, workspaceId: service.workspaceId };
}

async function loadDirectus(d: DirectusPeer, rows: number, singles: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const batchEnd = rows - singles;
  const batches = async () => {
    while (next < batchEnd) {
      const start = next;
      const n = Math.min(1_000, batchEnd - start);
      next += n;
      await d.insert(Array.from({ length: n }, (_, k) => directusItem(start + k)));
    }
  };
  await Promise.all(Array.from({ length: 4 }, batches));
  const one = async () => {
    while (next < rows) await d.insert([directusItem(next++)]);
  };
  await Promise.all(Array.from({ length: 16 }, one));
  return (performance.now() - t0) / 1000;
}

const ms = (t0: number) => performance.now() - t0;

async function main(cleanup: CleanupSteps): Promise<void> {
  setLogLevel('warn');
  mkdirSync(OUT, { recursive: true });
  const cli = ensureDirectus(process.env.DIRECTUS_DIR ?? join(OUT, 'directus'));
  step('starting MariaDB and Redis');
  const mariadb = await startMariaDb({ flushEachCommit: true, bufferPoolMb: 2048 });
  cleanup.add(() => mariadb.stop());
  const redis = await startRedis({ ownServer: true });
  cleanup.add(() => redis.stop());

  step('starting the service (start:api, MariaDB + Redis) and Directus on the same MariaDB');
  const ours = await ourService(await createDatabase(mariadb.url, 'wfs'), redis.url, join(OUT, 'directus-bench-service.log'), cleanup);
  const directus = await startDirectus({
    cli,
    databaseUrl: await createDatabase(mariadb.url, 'directus'),
    logPath: join(OUT, 'directus.log'),
  });
  cleanup.add(() => directus.stop());

  const { project, columns } = await createBenchProject(ours.storage, ours.workspaceId, `side by side ${ROWS}`);
  step(`loading ${ROWS.toLocaleString('en-US')} rows into the service over HTTP (rows/batch, then ${SINGLES} single POST rows)`);
  const ourLoad = await seedOverHttp(ours, project.id, columns, 0, ROWS, {
    batch: 1_000,
    concurrency: 4,
    singles: SINGLES,
    label: 'service',
  });
  step(`  ${ourLoad.seconds.toFixed(1)} s; the same rows into Directus (POST /items, the same split)`);
  const theirLoad = await loadDirectus(directus, ROWS, SINGLES);
  step(`  ${theirLoad.toFixed(1)} s`);

  const list = shapes(benchCases(columns));
  // Both must hold the same data: the same count for every shape, from which the last pages follow.
  for (const s of list) {
    const a = await getRows(ours, project.id, httpQuery(s.c, 1));
    const b = await directus.list(s.theirs(1));
    if (a.totalRows !== b.count) throw new Error(`${s.label}: the service counts ${a.totalRows}, Directus ${b.count}`);
    const last = Math.max(1, Math.ceil(a.totalRows / PAGE_SIZE));
    s.page = s.page === 'last' ? last : Math.min(s.page, last);
    s.ours = httpQuery(s.c, s.page);
  }

  let nextCompany = ROWS;
  const measure = async (phase: string, writeFirst: boolean): Promise<Row[]> => {
    const times = list.map(() => ({ ours: [] as number[], directus: [] as number[] }));
    for (let round = -WARMUP_ROUNDS; round < ROUNDS; round++) {
      if (round % 10 === 0) step(`${phase}: round ${Math.max(0, round) + 1} of ${ROUNDS}`);
      for (const [k, s] of list.entries()) {
        const i = nextCompany++;
        const runOurs = async () => {
          if (writeFirst) await postRow(ours, project.id, companyBody(columns, i));
          const t0 = performance.now();
          const page = await getRows(ours, project.id, s.ours);
          if (round >= 0) times[k]?.ours.push(ms(t0));
          if (page.ids.length === 0) throw new Error(`${s.label} page ${s.page}: the service answered no rows`);
        };
        const runTheirs = async () => {
          if (writeFirst) await directus.insert([directusItem(i)]);
          const t0 = performance.now();
          const page = await directus.list(s.theirs(s.page as number));
          if (round >= 0) times[k]?.directus.push(ms(t0));
          if (page.ids.length === 0) throw new Error(`${s.label} page ${s.page}: Directus answered no rows`);
        };
        // Interleaved, and each goes first every other round: neither gets the warmer machine.
        if (round % 2 === 0) await runOurs().then(runTheirs);
        else await runTheirs().then(runOurs);
      }
    }
    return list.map((s, k) => ({
      label: s.label,
      page: s.page as number,
      ours: summarize(times[k]?.ours ?? []),
      directus: summarize(times[k]?.directus ?? []),
    }));
  };
  const repeated = await measure('repeated requests', false);
  const afterWrite = await measure('one insert before each request', true);
  for (const s of list) {
    const a = await getRows(ours, project.id, httpQuery(s.c, 1));
    const b = await directus.list(s.theirs(1));
    if (a.totalRows !== b.count) throw new Error(`after the inserts, ${s.label}: the service counts ${a.totalRows}, Directus ${b.count}`);
  }

  const report = {
    startedAt: new Date().toISOString(),
    rows: ROWS,
    rounds: ROUNDS,
    machine: { cpus: cpus().length, bun: Bun.version, node: Bun.spawnSync(['node', '--version']).stdout.toString().trim() },
    directus: DIRECTUS_VERSION,
    load: { serviceSeconds: ourLoad.seconds, directusSeconds: theirLoad },
    repeated,
    afterWrite,
  };
  await Bun.write(join(OUT, 'directus.json'), JSON.stringify(report, null, 2));
  process.stdout.write(`${table(repeated, afterWrite)}\n\nJSON: ${join(OUT, 'directus.json')}\n`);
}

function table(repeated: Row[], afterWrite: Row[]): string {
  const f = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const pair = (l: Latency) => `${f(l.p50)} / ${f(l.p95)}`;
  const verdict = (r: Row) => `${(r.ours.p50 / r.directus.p50).toFixed(2)}× ${r.ours.p50 <= r.directus.p50 ? '✅' : '❌'}`;
  const lines = [
    `| case | page | service, repeated | Directus ${DIRECTUS_VERSION}, repeated | ratio | service, after an insert | Directus, after an insert | ratio |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [k, r] of repeated.entries()) {
    const w = afterWrite[k] as Row;
    lines.push(
      `| ${r.label} | ${r.page} | ${pair(r.ours)} | ${pair(r.directus)} | ${verdict(r)} | ${pair(w.ours)} | ${pair(w.directus)} | ${verdict(w)} |`,
    );
  }
  return `p50 / p95 in ms over HTTP, ${ROUNDS} interleaved rounds, ${ROWS.toLocaleString('en-US')} rows, page_size ${PAGE_SIZE}, both counting the matches\n\n${lines.join('\n')}`;
}

const cleanup = new CleanupSteps();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void cleanup.run().finally(() => process.exit(130)));
}
main(cleanup)
  .then(() => cleanup.run())
  .catch(async (e) => {
    process.stderr.write(`bench:directus failed: ${(e as Error).stack ?? String(e)}\n`);
    await cleanup.run();
    process.exit(1);
  });
