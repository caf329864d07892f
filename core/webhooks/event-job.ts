import type { Job } from '../ports/queue.ts';
import type { JobRequest } from '../jobs/job-outbox.ts';
import type { Kernel } from '../kernel.ts';
import type { Column, Project } from '../model.ts';
import { rowView } from '../rows/row-view.ts';
import { workState } from '../services/project-work.ts';
import { toolColumnNos } from '../services/rows.ts';
import { recordEvent, recordEvents } from './events.ts';
import { WEBHOOK_EVENTS_JOB } from '../jobs/job-names.ts';

/**
 * Enrichment results become webhook events in a job of their own, stored with the results (the
 * job outbox): the events of a written batch are recorded once, whatever crashes, and reading the
 * rows again stays off the enrichment path. Only batches of workspaces that want these events make one.
 */
const WORKING = new Set(['queued', 'running']);

/** The job telling these results, when the workspace has a webhook for row.enriched or column.completed. */
export async function webhookEventJobs(kernel: Kernel, project: Project, column: Column, seqs: number[]): Promise<JobRequest[]> {
  if (seqs.length === 0) return [];
  const hooks = await kernel.storage.webhooks.list(project.workspaceId);
  if (!hooks.some((w) => w.events.includes('row.enriched') || w.events.includes('column.completed'))) return [];
  return [{ type: WEBHOOK_EVENTS_JOB, payload: { project_pk: project.pk, col_no: column.no, seqs }, tenant: project.workspaceId }];
}

/**
 * row.enriched for each written row with no tool cell queued or running left (its data: the row,
 * as GET rows/{row_id} shows it); column.completed when the column has no cell queued or running
 * left. Dedupe keys: the job and row for the first; for the second the project's change counter,
 * which two batches ending together both read alike (one event), and which any later write moves.
 */
export async function runWebhookEventsJob(kernel: Kernel, job: Job): Promise<void> {
  const { project_pk, col_no, seqs } = job.payload as { project_pk: number; col_no: number; seqs: number[] };
  const project = await kernel.storage.projects.getByPk(project_pk);
  if (!project) return;
  const columns = await kernel.storage.projects.columns(project);
  const column = columns.find((c) => c.no === col_no);
  if (!column) return;
  const tools = toolColumnNos(columns);
  const rows = await kernel.storage.rows.getMany(project.pk, seqs, tools);
  const enriched = rows.filter((row) => !tools.some((no) => WORKING.has(row.cells[no]?.s ?? 'pending')));
  await recordEvents(
    kernel,
    project.workspaceId,
    'row.enriched',
    enriched.map((row) => ({
      dedupeKey: `${job.id}:${row.seq}`,
      data: { project_id: project.id, col_id: column.id, column: column.name, row: rowView(project.id, columns, row) },
    })),
  );
  // Counted first, then the counter read: two batches that both count none left read it alike.
  const state = await workState(kernel, project.pk, [column.id]);
  const version = await kernel.storage.rows.version(project.pk);
  if (state && state.cells_working === 0) {
    await recordEvent(kernel, project.workspaceId, 'column.completed', `${column.id}:${version}`, {
      project_id: project.id,
      col_id: column.id,
      column: column.name,
      rows: state.rows,
    });
  }
}
