import type { Backend, BenchDialect } from './backends.ts';
import { type BenchCase, benchCases } from './rows-cases.ts';
import { companyBody, companyCells } from './rows-dataset.ts';
import { growByCopy } from './rows-grow.ts';
import { postRow } from './http-client.ts';
import { type CaseResult, measureCase, measureListing, step, writers } from './rows-listing.ts';
import { type Throughput, throughput } from './measure.ts';
import { createBenchProject, type SeedResult, seedOverHttp } from './seed.ts';

/** Everything the bench runs against one database: seed, page latencies, inserts, (MariaDB) 1M rows. */

export interface Settings {
  rows: number;
  bigRows: number;
  samples: number;
  warmup: number;
  bigSamples: number;
  bigWarmup: number;
  /** Time per layer and case; slow queries get fewer samples (at least 15) instead of minutes each. */
  budgetSeconds: number;
  /** Time per layer for the 1M-row measurement; fewer samples (at least 6) when a call is slow. */
  bigBudgetSeconds: number;
  insertSeconds: number;
  insertConcurrency: number;
  seedBatch: number;
  bigSeedBatch: number;
  /** How the project grows to bigRows: over HTTP through rows/batch (`insert`), or a server-side copy of its rows (fast). */
  bigSeed: 'copy' | 'insert';
  seedConcurrency: number;
  /** Rows of the 100k load sent one per POST rows (the rest through rows/batch). */
  seedSingles: number;
}

export interface DialectResult {
  dialect: BenchDialect;
  where: string;
  seed: SeedResult;
  cases: CaseResult[];
  /** POST /rows, one row each. */
  inserts: Throughput;
  /** The same single-row inserts through `kernel.storage.rows.insert`, no HTTP. */
  insertsInProcess: Throughput;
  big?: { seed: SeedResult; cases: CaseResult[] };
  warnings: string[];
}

async function liveRows(b: Backend, projectPk: number): Promise<number> {
  return (await b.storage.rows.counts([projectPk])).get(projectPk) ?? 0;
}

export async function runDialect(b: Backend, s: Settings): Promise<DialectResult> {
  const warnings: string[] = [];
  const { project, columns } = await createBenchProject(b.storage, b.workspaceId, `bench ${s.rows} rows`);
  const cases = benchCases(columns);
  // Company numbers: seeded rows first, then each insert phase continues where the last stopped.
  let nextCompany = s.rows;

  step(
    `${b.dialect}: loading ${s.rows.toLocaleString('en-US')} rows over HTTP (${Math.min(s.seedSingles, s.rows).toLocaleString('en-US')} of them by single POST rows in waves of 16)`,
  );
  const seed = await seedOverHttp(b, project.id, columns, 0, s.rows, {
    batch: s.seedBatch,
    concurrency: s.seedConcurrency,
    singles: Math.min(s.seedSingles, s.rows),
    label: b.dialect,
  });
  step(`${b.dialect}: loaded in ${seed.seconds.toFixed(1)} s (${Math.round(seed.rowsPerSecond)} rows/s)`);

  const writes = writers(b, project, columns);
  const target = { project, columns, projectRows: s.rows, writes };
  const sampling = { samples: s.samples, warmup: s.warmup, budget: { budgetMs: s.budgetSeconds * 1000, minSamples: 15 }, inProcess: true };
  const results = await measureListing(b, target, cases, sampling, warnings);

  step(`${b.dialect}: POST /rows at concurrency ${s.insertConcurrency} for ${s.insertSeconds} s, then RowRepo.insert`);
  const httpBase = nextCompany;
  const inserts = await throughput((n) => postRow(b, project.id, companyBody(columns, httpBase + n)), s.insertConcurrency, s.insertSeconds);
  nextCompany += inserts.ok + inserts.failed;
  const repoBase = nextCompany;
  const insertsInProcess = await throughput(
    (n) => b.storage.rows.insert(project.pk, columns, [companyCells(columns, repoBase + n)]).then(() => undefined),
    s.insertConcurrency,
    s.insertSeconds,
  );
  nextCompany += insertsInProcess.ok + insertsInProcess.failed;
  for (const [what, t] of [
    ['POST /rows', inserts],
    ['RowRepo.insert', insertsInProcess],
  ] as const) {
    if (t.failed > 0) warnings.push(`${b.dialect}: ${t.failed} ${what} calls failed, first: ${t.firstError}`);
  }
  step(`${b.dialect}: ${Math.round(inserts.perSecond)} rows/s over HTTP, ${Math.round(insertsInProcess.perSecond)} rows/s in-process`);

  let big: DialectResult['big'];
  if (b.dialect === 'mysql' && s.bigRows > s.rows) {
    const have = await liveRows(b, project.pk);
    step(`${b.dialect}: growing the project from ${have.toLocaleString('en-US')} to ${s.bigRows.toLocaleString('en-US')} rows`);
    const label = `${b.dialect} 1M`;
    const bigSeed =
      s.bigSeed === 'copy'
        ? await growByCopy(b.storage.database, project.pk, s.bigRows, label)
        : await seedOverHttp(b, project.id, columns, nextCompany, Math.max(0, s.bigRows - have), {
            batch: 1_000,
            concurrency: s.seedConcurrency,
            singles: 0,
            label,
          });
    // Another process's row on top: what this process remembers is checked again, as after a copy that bypassed it.
    await writes.other();
    step(`${b.dialect}: grown in ${bigSeed.seconds.toFixed(1)} s (${Math.round(bigSeed.rowsPerSecond)} rows/s)`);
    const projectRows = await liveRows(b, project.pk);
    if (projectRows !== s.bigRows + 1)
      warnings.push(`${b.dialect}: project has ${projectRows} rows after growing, expected ${s.bigRows + 1}`);
    // Page 1 unfiltered (the reference), numeric sort and filter + sort: each sorted case within 3× of the first.
    const bigCases = (['a', 'c', 'd'] as const).map((key) => cases.find((c) => c.key === key) as BenchCase);
    // Bare SQL and HTTP only: at 1M rows every layer can take a minute.
    const bigSampling = {
      samples: s.bigSamples,
      warmup: s.bigWarmup,
      budget: { budgetMs: s.bigBudgetSeconds * 1000, minSamples: 6 },
      inProcess: false,
    };
    const measured: CaseResult[] = [];
    for (const c of bigCases) {
      step(`${b.dialect}: ${c.label}, page 1 at ${projectRows.toLocaleString('en-US')} rows`);
      measured.push(await measureCase(b, { project, columns, projectRows, writes }, c, 1, bigSampling, warnings));
    }
    big = { seed: bigSeed, cases: measured };
  }
  return { dialect: b.dialect, where: b.where, seed, cases: results, inserts, insertsInProcess, big, warnings };
}
