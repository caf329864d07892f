import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { setLogLevel } from '../../core/log.ts';
import { type Backend, type BenchDialect, startBackend } from './backends.ts';
import { importLine, measureImport } from './import-bench.ts';
import { type BenchReport, markdown, slowPlans, writeJson } from './rows-report.ts';
import { runDialect, type Settings } from './rows-suite.ts';

/**
 * `bun run bench`: row listing latency (bare SQL, in-process, HTTP), single-row insert throughput
 * and a 1M-row filter+sort on MariaDB, then SQLite. Prints a markdown table to stdout (progress
 * and slow-query plans go to stderr) and writes .bench/results.json.
 *
 * Knobs (env): BENCH_DIALECTS=mysql,sqlite  BENCH_ROWS=100000  BENCH_BIG_ROWS=1000000 (0 = skip)
 * BENCH_SAMPLES=200  BENCH_WARMUP=20  BENCH_BIG_SAMPLES=30  BENCH_INSERT_SECONDS=5  MYSQL_URL
 * BENCH_BUDGET_SECONDS=3 / BENCH_BIG_BUDGET_SECONDS=15 (time per layer and query: slow queries get
 * fewer samples, at least 15 / 6), BENCH_SEED_SINGLES (rows of the load sent one per POST rows in waves of 16, as users send them; default all;
 * the rest go first through POST rows/batch), BENCH_BIG_SEED=insert|copy (grow to 1M over HTTP through rows/batch, the default, or by a
 * server-side copy), BENCH_REDIS=1 (MariaDB: jobs and project events through a throwaway redis-server, as in production).
 */

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

const settings: Settings = {
  rows: num('BENCH_ROWS', 100_000),
  bigRows: num('BENCH_BIG_ROWS', 1_000_000),
  samples: num('BENCH_SAMPLES', 200),
  warmup: num('BENCH_WARMUP', 20),
  bigSamples: num('BENCH_BIG_SAMPLES', 30),
  bigWarmup: num('BENCH_BIG_WARMUP', 1),
  budgetSeconds: num('BENCH_BUDGET_SECONDS', 3),
  bigBudgetSeconds: num('BENCH_BIG_BUDGET_SECONDS', 15),
  insertSeconds: num('BENCH_INSERT_SECONDS', 5),
  insertConcurrency: num('BENCH_INSERT_CONCURRENCY', 32),
  seedBatch: 1_000,
  bigSeedBatch: 1_000,
  seedConcurrency: 4,
  seedSingles: num('BENCH_SEED_SINGLES', Number.POSITIVE_INFINITY),
  bigSeed: process.env.BENCH_BIG_SEED === 'copy' ? 'copy' : 'insert',
};
const dialects = (process.env.BENCH_DIALECTS ?? 'mysql,sqlite').split(',').map((d) => d.trim()) as BenchDialect[];
for (const d of dialects) if (d !== 'mysql' && d !== 'sqlite') throw new Error(`BENCH_DIALECTS: unknown dialect "${d}" (mysql, sqlite)`);

const RESULTS = resolve(import.meta.dir, '../../.bench/results.json');

let current: Backend | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping the service and database…\n`);
    void (current?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  setLogLevel('warn');
  const startedAt = new Date();
  const report: BenchReport = {
    startedAt: startedAt.toISOString(),
    seconds: 0,
    settings,
    machine: {
      bun: Bun.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpus().length,
      loadAvgStart: loadavg(),
      loadAvgEnd: [],
    },
    dialects: [],
  };
  for (const dialect of dialects) {
    current = await startBackend(dialect);
    try {
      report.dialects.push(await runDialect(current, settings));
    } finally {
      await current.stop();
      current = undefined;
    }
  }
  // Bulk import: rows/s of an uploaded CSV (POST /projects/import.csv), on a service that runs its worker.
  const imports: string[] = [];
  const importRows = Number(process.env.BENCH_IMPORT_ROWS ?? 200_000);
  for (const dialect of importRows > 0 ? dialects : []) {
    current = await startBackend(dialect, { workers: 1 });
    try {
      imports.push(importLine(dialect, await measureImport(current, importRows, (l) => process.stderr.write(`${l}\n`))));
    } finally {
      await current.stop();
      current = undefined;
    }
  }
  report.seconds = (Date.now() - startedAt.getTime()) / 1000;
  report.machine.loadAvgEnd = loadavg();
  writeJson(RESULTS, report);
  const plans = slowPlans(report);
  if (plans) process.stderr.write(`\nQueries over target (statement, then plan):\n${plans}\n`);
  process.stdout.write(`${markdown(report)}\n\nJSON: ${RESULTS}\n`);
  if (imports.length) process.stdout.write(`\nBulk import (bun run bench:import for 1,000,000 rows):\n${imports.join('\n')}\n`);
}

main().catch(async (e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n${((e as Error).cause as Error | undefined)?.stack ?? ''}\n`);
  await current?.stop();
  process.exit(1);
});
