import type { Kernel } from '../kernel.ts';
import type { Cell, Column } from '../model.ts';
import type { BuilderRunState } from '../storage.ts';

export const ENRICH_JOB = 'enrich.batch';

/**
 * Rows per enrichment job: two of the tool's batches, between 50 and 800 (below MariaDB's IN-list
 * conversion threshold, so each of the job's statements stays an index lookup). Fast tools (large
 * batches) get large jobs, so the per-job database work is spread over many cells; slow tools get
 * small ones, so several workers share a column.
 */
export function enrichJobRows(kernel: Kernel, column: Column): number {
  const steps = column.waterfall ?? [{ tool_id: column.toolId ?? '' }];
  const batch = Math.min(...steps.map((s) => kernel.plugins.tool(s.tool_id)?.batchSize ?? 1));
  return Math.max(50, Math.min(800, batch * 2));
}

/** Queues enrichment of these rows for one tool column, in jobs of `enrichJobRows` rows. */
export async function enqueueEnrichment(kernel: Kernel, projectPk: number, column: Column, seqs: number[]): Promise<void> {
  const size = enrichJobRows(kernel, column);
  for (let i = 0; i < seqs.length; i += size) {
    await kernel.queue.enqueue(ENRICH_JOB, { project_pk: projectPk, col_no: column.no, seqs: seqs.slice(i, i + size) });
  }
}

/**
 * Inserts rows (input cells given) and starts their auto-run tool columns: those cells are written
 * `queued` with the rows, then one job per column picks them up.
 */
export async function insertRows(
  kernel: Kernel,
  projectPk: number,
  columns: Column[],
  rows: Record<number, Cell>[],
  builderState?: BuilderRunState,
): Promise<number[]> {
  const auto = columns.filter((c) => c.type === 'tool' && c.autoRun);
  for (const cells of rows) for (const c of auto) cells[c.no] = { v: null, s: 'queued' };
  const seqs = await kernel.storage.rows.insert(projectPk, columns, rows, builderState);
  for (const c of auto) await enqueueEnrichment(kernel, projectPk, c, seqs);
  return seqs;
}
