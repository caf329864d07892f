import { autoOrder } from '../../columns/auto-order.ts';
import { columnSteps } from '../../columns/column-steps.ts';
import type { Kernel } from '../../kernel.ts';
import type { EnrichBatch } from '../../columns/enrich-batch.ts';

/**
 * Step 1, claim: moves the job's cells still `queued` (or `running` in this job, left by a worker
 * that died: the queue delivers the job again under its id) to `running`, held by this job, and reads
 * their rows. A cell another job holds is left to it: a column that reads other tool columns gets a
 * job from each of them for the same cells, and only one may run and charge them. A redelivered job
 * whose cells are settled claims nothing (null), which is what makes the job idempotent.
 */
export async function claimBatch(
  kernel: Kernel,
  jobId: string,
  payload: { project_pk: number; col_no: number; seqs: number[] },
): Promise<EnrichBatch | null> {
  const { projects, rows } = kernel.storage;
  const project = await projects.getByPk(payload.project_pk);
  if (!project) return null;
  const columns = await projects.columns(project.pk);
  const column = columns.find((c) => c.no === payload.col_no && c.type === 'tool');
  if (!column) return null;
  const claimed = await rows.moveHeld(project.pk, column.no, payload.seqs, ['queued', 'running'], 'running', { jobId, hold: true });
  if (claimed.length === 0) return null;
  // Tool values live with their keys: read every other tool column (conditions and formulas may use any).
  const others = columns.filter((c) => c.type === 'tool' && c.no !== column.no).map((c) => c.no);
  const listed = columnSteps(column);
  let steps = listed;
  if (column.stepOrder === 'auto' && listed.length > 1) {
    const stats = await kernel.storage.toolStats.get(project.workspaceId, [...new Set(listed.map((s) => s.tool_id))]);
    steps = autoOrder(listed, stats);
  }
  return {
    jobId,
    project,
    columns,
    column,
    steps,
    listedIndex: steps.map((s) => listed.indexOf(s)),
    rows: await rows.getMany(project.pk, claimed, others),
    runOf: await rows.runsOf(project.pk, column.no, claimed),
  };
}
