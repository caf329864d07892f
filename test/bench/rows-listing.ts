import type { Column, Project } from '../../core/model.ts';
import type { Backend } from './backends.ts';
import { barePage, explainPage, statementText } from './rows-bare-sql.ts';
import { type BenchCase, DEEP_PAGE, httpQuery, PAGE_SIZE, pageQuery } from './rows-cases.ts';
import { getRows } from './http-client.ts';
import { companyCells } from './rows-dataset.ts';
import { type Latency, type LatencyBudget, latency } from './measure.ts';

/** Latency of one row listing (case × page) at three layers, checked against each other first. */

export interface CaseResult {
  case: BenchCase['key'];
  label: string;
  page: number;
  projectRows: number;
  returned: number;
  totalRows: number;
  targetMs: number;
  /** The statements of SqlRowRepo.page, bare (Kysely `sql`, cells not parsed). */
  sql: Latency;
  /** `kernel.storage.rows.page(...)`: the repository call, no HTTP (null: not measured). */
  inProcess: Latency | null;
  /** GET /projects/{id}/rows over HTTP, body read and parsed (a filtered total is reused from the previous call). */
  http: Latency;
  /** The same right after this process inserted a row (remembered totals follow it; anchors may not). */
  httpAfterWrite: Latency | null;
  /** The same right after another process wrote to the project: nothing remembered is used. */
  httpAfterOtherWrite: Latency | null;
  statement: string;
  plan: string;
}

/** The project under test, and two kinds of write to it (see writers). */
export interface Target {
  project: Project;
  columns: Column[];
  projectRows: number;
  writes: Writes;
}

export interface Writes {
  /** This process inserts one company row (as POST /rows or a builder page does). */
  own: () => Promise<unknown>;
  /** Another process wrote a row: the project's change counter moves; totals shared through the database follow it. */
  other: () => Promise<unknown>;
}

/** Own writes insert companies numbered from here on, apart from the seeded and the insert-phase ones. */
const OWN_WRITE_COMPANIES = 50_000_000;

export function writers(b: Backend, project: Project, columns: Column[]): Writes {
  let n = OWN_WRITE_COMPANIES;
  return {
    own: () => b.storage.rows.insert(project.pk, columns, [companyCells(columns, n++)]),
    // A row inserted by another process (its own repository and memory, the same database).
    other: () => b.otherProcess.rows.insert(project.pk, columns, [companyCells(columns, n++)]),
  };
}

export interface Sampling {
  samples: number;
  warmup: number;
  budget: LatencyBudget;
  inProcess: boolean;
}

const sameIds = (a: number[], b: string[]) => a.length === b.length && a.every((v, i) => String(v) === b[i]);

export async function measureCase(
  b: Backend,
  target: Target,
  c: BenchCase,
  page: number,
  sampling: Sampling,
  warnings: string[],
): Promise<CaseResult> {
  const { project, columns } = target;
  const database = b.storage.database;
  const q = pageQuery(c, columns, project.pk, page);
  const query = httpQuery(c, page);
  const where = `${b.dialect} ${c.label} page ${page}`;
  // One checked call per layer first: the replica and HTTP must agree with the repository.
  const repo = await b.storage.rows.page(q);
  const repoSeqs = repo.rows.map((r) => r.seq);
  const bare = await barePage(database, q);
  if (bare.total !== repo.total || bare.seqs.join() !== repoSeqs.join()) {
    warnings.push(
      `${where}: bare-SQL replica disagrees with SqlRowRepo.page (total ${bare.total} vs ${repo.total}); has adapters/storage/rows/row-listing.ts changed?`,
    );
  }
  const viaHttp = await getRows(b, project.id, query);
  if (viaHttp.totalRows !== repo.total || !sameIds(repoSeqs, viaHttp.ids)) {
    warnings.push(`${where}: HTTP page differs from the repository page (total_rows ${viaHttp.totalRows} vs ${repo.total})`);
  }
  const { samples, warmup, budget } = sampling;
  const sqlLatency = await latency(() => barePage(database, q), samples, warmup, budget);
  const inProcess = sampling.inProcess ? await latency(() => b.storage.rows.page(q), samples, warmup, budget) : null;
  const http = await latency(() => getRows(b, project.id, query), samples, warmup, budget);
  const httpAfterWrite = await latency(() => getRows(b, project.id, query), samples, warmup, budget, target.writes.own);
  const httpAfterOtherWrite = await latency(() => getRows(b, project.id, query), samples, warmup, budget, target.writes.other);
  return {
    case: c.key,
    label: c.label,
    page,
    projectRows: target.projectRows,
    returned: repo.rows.length,
    totalRows: viaHttp.totalRows,
    targetMs: c.targetMs,
    sql: sqlLatency,
    inProcess,
    http,
    httpAfterWrite,
    httpAfterOtherWrite,
    statement: statementText(database, q),
    plan: await explainPage(database, q),
  };
}

export const step = (msg: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/** Every case at page 1 and page 500, plus the last page when page 500 is past the end. */
export async function measureListing(
  b: Backend,
  target: Target,
  cases: BenchCase[],
  sampling: Sampling,
  warnings: string[],
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const c of cases) {
    for (const page of [1, DEEP_PAGE]) {
      step(`${b.dialect}: ${c.label}, page ${page}`);
      const r = await measureCase(b, target, c, page, sampling, warnings);
      results.push(r);
      // A filter matching ~10% has 200 pages: page 500 is past the end, so also time the real last page.
      const lastPage = Math.ceil(r.totalRows / PAGE_SIZE);
      if (page === DEEP_PAGE && lastPage > 1 && lastPage < DEEP_PAGE) {
        step(`${b.dialect}: ${c.label}, last page ${lastPage}`);
        results.push(await measureCase(b, target, c, lastPage, sampling, warnings));
      }
    }
  }
  return results;
}
