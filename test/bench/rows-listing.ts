import type { Column, Project } from '../../core/model.ts';
import type { Backend } from './backends.ts';
import { barePage, explainPage, statementText } from './rows-bare-sql.ts';
import { type BenchCase, DEEP_PAGE, httpQuery, PAGE_SIZE, pageQuery } from './rows-cases.ts';
import { getRows } from './http-client.ts';
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
  /** The same right after a write to the project, so the filtered total is counted afresh (filtered cases only). */
  httpAfterWrite: Latency | null;
  statement: string;
  plan: string;
}

/** The project under test; `touch` is a write that changes no value but ends the reuse of filtered totals. */
export interface Target {
  project: Project;
  columns: Column[];
  projectRows: number;
  touch: () => Promise<unknown>;
}

/**
 * A write that changes nothing visible: one input cell's status from default to default. The
 * repository still bumps the project's change counter, so the next filtered total is recounted,
 * as after any real insert or enrichment result.
 */
export async function toucher(b: Backend, project: Project, columns: Column[]): Promise<() => Promise<unknown>> {
  const row = await b.storage.rows.first(project.pk);
  const col = columns[0];
  if (!row || !col) throw new Error('bench project has no rows or columns');
  return () => b.storage.rows.moveStatus(project.pk, col.no, ['default'], 'default', [row.seq]);
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
    warnings.push(`${where}: bare-SQL replica disagrees with SqlRowRepo.page (total ${bare.total} vs ${repo.total}); has row-repo.ts changed?`);
  }
  const viaHttp = await getRows(b, project.id, query);
  if (viaHttp.totalRows !== repo.total || !sameIds(repoSeqs, viaHttp.ids)) {
    warnings.push(`${where}: HTTP page differs from the repository page (total_rows ${viaHttp.totalRows} vs ${repo.total})`);
  }
  const { samples, warmup, budget } = sampling;
  const sqlLatency = await latency(() => barePage(database, q), samples, warmup, budget);
  const inProcess = sampling.inProcess ? await latency(() => b.storage.rows.page(q), samples, warmup, budget) : null;
  const http = await latency(() => getRows(b, project.id, query), samples, warmup, budget);
  const httpAfterWrite = c.filterGroups ? await latency(() => getRows(b, project.id, query), samples, warmup, budget, target.touch) : null;
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

