import { columnSteps } from '../columns/column-steps.ts';
import { startRun } from '../credits/runs.ts';
import { ServiceError } from '../errors.ts';
import { type JobRequest, writeStartingJobs } from '../jobs/job-outbox.ts';
import type { Kernel } from '../kernel.ts';
import type { Cell, Column, Project } from '../model.ts';
import { rowValuesProblem } from '../rows/cell-limits.ts';
import { rowKey } from '../rows/unique-key.ts';
import { type BuilderRunState, UniqueKeyTaken } from '../ports/storage.ts';
import { ENRICH_JOB } from '../jobs/job-names.ts';

/** Rows one call may add; larger imports go through csv_import_builder or several calls. */
export const MAX_BATCH_ROWS = 1000;

/**
 * Rows per enrichment job: two of the tool's batches, at least 50 and at most what storage reads
 * or writes in one statement (`rowsPerStatement`, so each of the job's statements stays an index
 * lookup). Fast tools (large batches) get large jobs, so the per-job database work is spread over
 * many cells; slow tools get small ones, so several workers share a column.
 */
export function enrichJobRows(kernel: Kernel, column: Column): number {
  const batch = Math.min(...columnSteps(column).map((s) => kernel.plugins.tool(s.tool_id)?.batchSize ?? 1));
  return Math.max(50, Math.min(kernel.storage.rows.rowsPerStatement, batch * 2));
}

/** The jobs that enrich these rows for one tool column, `enrichJobRows` rows each. */
export function enrichmentJobs(kernel: Kernel, project: Pick<Project, 'pk' | 'workspaceId'>, column: Column, seqs: number[]): JobRequest[] {
  const size = enrichJobRows(kernel, column);
  const jobs: JobRequest[] = [];
  for (let i = 0; i < seqs.length; i += size) {
    jobs.push({
      type: ENRICH_JOB,
      payload: { project_pk: project.pk, col_no: column.no, seqs: seqs.slice(i, i + size) },
      tenant: project.workspaceId,
    });
  }
  return jobs;
}

/**
 * Refuses rows whose values do not fit (MAX_CELL_BYTES, MAX_ROW_BYTES, numbers JSON cannot carry),
 * before anything is written: 403 naming the column, and `rows[i]` when several rows came at once.
 */
function checkSizes(kernel: Kernel, columns: Column[], rows: Record<number, Cell>[]): void {
  const names = new Map(columns.map((c) => [c.no, c.name]));
  rows.forEach((cells, i) => {
    const values = Object.entries(cells).map(([no, cell]): [string, unknown] => [names.get(Number(no)) ?? no, cell.v]);
    const problem = rowValuesProblem(values, kernel.config.limits);
    if (!problem) return;
    const message = rows.length > 1 ? `rows[${i}]: ${problem.message}` : problem.message;
    throw new ServiceError('validation_error', { message, row_index: i, column: problem.column }, { status: 403 });
  });
}

/** What an insert did: each row's id (new, or the existing row holding its unique key), which are new, and rows updated. */
export interface InsertOutcome {
  seqs: number[];
  created: boolean[];
  /** Existing rows whose empty input cells the insert filled (on_conflict "update"). */
  updated: number;
}

/** A builder page's state, or how to make it from the number of rows the page added (unique keys may skip some). */
type PageState = BuilderRunState | ((added: number) => BuilderRunState);

/** Attempts of an insert whose unique keys other writes keep taking first. */
const KEY_ATTEMPTS = 5;

/**
 * Inserts rows (input cells given) and starts their auto-run tool columns: those cells are written
 * `queued` with the rows, then one job per column picks them up. Every write path (REST, MCP,
 * builder runs, inbound rows) comes through here, so the size bounds and the project's unique key
 * hold for all of them: a row whose key exists (or repeats an earlier row of the same call) is not
 * inserted — it answers the existing row, whose empty input cells it fills with on_conflict "update".
 */
export async function insertRows(
  kernel: Kernel,
  project: Project,
  columns: Column[],
  rows: Record<number, Cell>[],
  options: { builderState?: PageState; keyId?: string } = {},
): Promise<InsertOutcome> {
  checkSizes(kernel, columns, rows);
  const keyColumns = project.settings.uniqueColumns.map((name) => columns.find((c) => c.name === name));
  if (keyColumns.length === 0 || keyColumns.some((c) => !c)) {
    const seqs = await write(kernel, project, columns, rows, options);
    return { seqs, created: seqs.map(() => true), updated: 0 };
  }
  const keys = rows.map((cells) => rowKey((keyColumns as Column[]).map((c) => cells[c.no]?.v ?? null)));
  const firstOf = new Map<string, number>();
  keys.forEach((k, i) => {
    if (k && !firstOf.has(k)) firstOf.set(k, i);
  });
  for (let attempt = 1; ; attempt++) {
    const existing = await kernel.storage.rows.findKeys(project.pk, [...firstOf.keys()]);
    const fresh = rows.flatMap((_, i) => {
      const k = keys[i];
      return !k || (firstOf.get(k) === i && !existing.has(k)) ? [i] : [];
    });
    let added: number[];
    try {
      added = await write(
        kernel,
        project,
        columns,
        fresh.map((i) => rows[i] as Record<number, Cell>),
        options,
        fresh.map((i) => keys[i] ?? null),
      );
    } catch (e) {
      if (e instanceof UniqueKeyTaken && attempt < KEY_ATTEMPTS) continue;
      throw e;
    }
    const seqOf = new Map(fresh.map((i, j) => [i, added[j] as number]));
    const seqs = rows.map((_, i) => {
      const mine = seqOf.get(i);
      if (mine !== undefined) return mine;
      const k = keys[i] as string;
      return existing.get(k) ?? (seqOf.get(firstOf.get(k) as number) as number);
    });
    let updated = 0;
    if (project.settings.onConflict === 'update') {
      const updates = rows.flatMap((cells, i) => (seqOf.has(i) ? [] : [{ seq: seqs[i] as number, cells }]));
      updated = new Set((await kernel.storage.rows.fillEmpty(project.pk, columns, updates)).map((f) => f.seq)).size;
    }
    return { seqs, created: rows.map((_, i) => seqOf.has(i)), updated };
  }
}

/**
 * Which of these rows an insert would add: under a unique key, those whose key is new to the
 * project and to the rows before them (or that have no key); without one, all. A builder page
 * measures the plan's room in these, so rows it already holds never stop a run.
 */
export async function addsRows(kernel: Kernel, project: Project, columns: Column[], rows: Record<number, Cell>[]): Promise<boolean[]> {
  const keyColumns = project.settings.uniqueColumns.map((name) => columns.find((c) => c.name === name));
  if (keyColumns.length === 0 || keyColumns.some((c) => !c)) return rows.map(() => true);
  const keys = rows.map((cells) => rowKey((keyColumns as Column[]).map((c) => cells[c.no]?.v ?? null)));
  const existing = await kernel.storage.rows.findKeys(project.pk, [...new Set(keys.filter((k): k is string => k !== null))]);
  const seen = new Set<string>();
  return keys.map((k) => {
    if (k === null) return true;
    if (existing.has(k) || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** One insert of rows (with their keys), their auto-run cells queued and their jobs stored in the same transaction. */
async function write(
  kernel: Kernel,
  project: Project,
  columns: Column[],
  rows: Record<number, Cell>[],
  options: { builderState?: PageState; keyId?: string },
  keys?: (string | null)[],
): Promise<number[]> {
  const state = typeof options.builderState === 'function' ? options.builderState(rows.length) : options.builderState;
  const auto = columns.filter((c) => c.type === 'tool' && c.autoRun);
  for (const cells of rows) for (const c of auto) cells[c.no] = { v: null, s: 'queued' };
  if (auto.length === 0 || rows.length === 0) return kernel.storage.rows.insert(project.pk, columns, rows, { builderState: state, keys });
  // Cells queued by a call with a key spend under that key's monthly cap.
  const runId = options.keyId ? await startRun(kernel, project.workspaceId, { keyId: options.keyId }) : undefined;
  // The rows and the jobs that enrich them commit together (core/jobs/job-outbox.ts).
  return writeStartingJobs(
    kernel,
    (seqs: number[]) => auto.flatMap((c) => enrichmentJobs(kernel, project, c, seqs)),
    (jobs) => kernel.storage.rows.insert(project.pk, columns, rows, { builderState: state, jobs, runId, keys }),
  );
}
