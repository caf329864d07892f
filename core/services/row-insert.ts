import { columnSteps } from '../columns/column-steps.ts';
import { startRun } from '../credits/runs.ts';
import { ServiceError } from '../errors.ts';
import { type JobRequest, writeStartingJobs } from '../jobs/job-outbox.ts';
import type { Kernel } from '../kernel.ts';
import type { Cell, Column } from '../model.ts';
import { rowValuesProblem } from '../rows/cell-limits.ts';
import type { BuilderRunState } from '../storage.ts';

export const ENRICH_JOB = 'enrich.batch';

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
export function enrichmentJobs(kernel: Kernel, projectPk: number, column: Column, seqs: number[]): JobRequest[] {
  const size = enrichJobRows(kernel, column);
  const jobs: JobRequest[] = [];
  for (let i = 0; i < seqs.length; i += size) {
    jobs.push({ type: ENRICH_JOB, payload: { project_pk: projectPk, col_no: column.no, seqs: seqs.slice(i, i + size) } });
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

/**
 * Inserts rows (input cells given) and starts their auto-run tool columns: those cells are written
 * `queued` with the rows, then one job per column picks them up. Every write path (REST, MCP,
 * builder runs) comes through here, so the size bounds hold for all of them.
 */
export async function insertRows(
  kernel: Kernel,
  projectPk: number,
  columns: Column[],
  rows: Record<number, Cell>[],
  builderState?: BuilderRunState,
  keyId?: string,
): Promise<number[]> {
  checkSizes(kernel, columns, rows);
  const auto = columns.filter((c) => c.type === 'tool' && c.autoRun);
  for (const cells of rows) for (const c of auto) cells[c.no] = { v: null, s: 'queued' };
  if (auto.length === 0) return kernel.storage.rows.insert(projectPk, columns, rows, builderState);
  // Cells queued by a call with a key spend under that key's monthly cap.
  const workspaceId = keyId ? (await kernel.storage.projects.getByPk(projectPk))?.workspaceId : undefined;
  const runId = workspaceId ? await startRun(kernel, workspaceId, { keyId }) : undefined;
  // The rows and the jobs that enrich them commit together (core/jobs/job-outbox.ts).
  return writeStartingJobs(
    kernel,
    (seqs: number[]) => auto.flatMap((c) => enrichmentJobs(kernel, projectPk, c, seqs)),
    (jobs) => kernel.storage.rows.insert(projectPk, columns, rows, builderState, jobs, runId),
  );
}
