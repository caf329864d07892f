import type { Kernel } from '../kernel.ts';
import type { Cell, Column } from '../model.ts';
import type { BuilderRunState } from '../storage.ts';

export const ENRICH_JOB = 'enrich.batch';
/** Rows per enrichment job; the job calls the plugin in its own `batchSize` chunks. */
export const ENRICH_JOB_ROWS = 200;

/** Queues enrichment of these rows for one tool column, in jobs of ENRICH_JOB_ROWS rows. */
export async function enqueueEnrichment(kernel: Kernel, projectPk: number, colNo: number, seqs: number[]): Promise<void> {
  for (let i = 0; i < seqs.length; i += ENRICH_JOB_ROWS) {
    await kernel.queue.enqueue(ENRICH_JOB, { project_pk: projectPk, col_no: colNo, seqs: seqs.slice(i, i + ENRICH_JOB_ROWS) });
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
  for (const c of auto) await enqueueEnrichment(kernel, projectPk, c.no, seqs);
  return seqs;
}
