import { type Static, Type } from '@sinclair/typebox';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { toolContext } from '../plugins/plugin-context.ts';
import { applyRunCondition } from './enrichment/apply-condition.ts';
import { chargeRows, refundRows } from './enrichment/charge-rows.ts';
import { claimBatch } from './enrichment/claim-batch.ts';
import { classifyResults } from './enrichment/classify-results.ts';
import type { EnrichBatch, OpenRow, Settled } from './enrichment/enrich-batch.ts';
import { dependentJobs } from './enrichment/follow-ups.ts';
import { writeStartingJobs } from './job-outbox.ts';
import { prepareStep } from './enrichment/prepare-step.ts';
import { reuseCached } from './enrichment/result-cache.ts';
import { runTool } from './enrichment/run-tool.ts';
import { sortByDependencies } from './enrichment/sort-rows.ts';
import { type Job, type JobContext, retryableError } from './queue.ts';

export const EnrichPayloadSchema = Type.Object({
  project_pk: Type.Integer({ minimum: 1 }),
  col_no: Type.Integer({ minimum: 1 }),
  seqs: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 }),
  /** The run's max_credits budget (run_budgets.id), when it set one. */
  budget_id: Type.Optional(Type.String()),
  /** The API key whose call started the run: charges count against its monthly cap. */
  key_id: Type.Optional(Type.String()),
});
export type EnrichPayload = Static<typeof EnrichPayloadSchema>;

/**
 * Runs the column's steps (one tool, or a waterfall) over the open rows: prepare → cache → charge →
 * run → classify, step after step, until every row is settled, waits for a retry, or the steps end.
 */
async function runSteps(kernel: Kernel, batch: EnrichBatch, jobCtx: JobContext, open: OpenRow[], settled: Settled) {
  const spent = new Map<number, number>(); // credits each row has cost this run (the per-row cap)
  const retry: number[] = [];
  const held: number[] = [];
  let lastError = '';
  for (const [stepIndex, step] of batch.steps.entries()) {
    if (open.length === 0) break;
    const tool = kernel.plugins.tool(step.tool_id);
    if (!tool) {
      for (const o of open) settled.set(o.row.seq, { v: null, s: 'error', e: `tool "${step.tool_id}" is not installed` });
      return { retry, held, lastError };
    }
    const isLast = stepIndex === batch.steps.length - 1;
    const plan = prepareStep(
      { jobId: batch.jobId, stepIndex, isLast, step, tool, maxCreditsPerRow: batch.column.maxCreditsPerRow, spent },
      open,
      settled,
    );
    const cached = await reuseCached(kernel, batch.project.workspaceId, tool, plan.ready, settled);
    const { paid, held: stopped } = await chargeRows(kernel, batch, tool, cached.ready, spent, settled);
    held.push(...stopped.map((r) => r.row.seq));
    const ctx = toolContext(kernel, tool, jobCtx.signal, { job_id: batch.jobId, worker: jobCtx.workerId, column: batch.column.id });
    const results = await runTool(
      kernel,
      tool,
      paid.map((r) => r.item),
      ctx,
    );
    const outcome = classifyResults({ tool, isLast, lastAttempt: jobCtx.lastAttempt, cacheKeys: cached.keys }, paid, results, settled);
    await refundRows(kernel, batch, tool, outcome.refund, spent);
    if (outcome.toCache.length && tool.cacheTtlMs) await kernel.storage.cache.putMany(outcome.toCache, tool.cacheTtlMs);
    retry.push(...outcome.retry.map((r) => r.row.seq));
    if (outcome.retry.length) lastError = outcome.lastError;
    open = [...plan.passOn, ...outcome.next];
  }
  for (const o of open) if (!settled.has(o.row.seq)) settled.set(o.row.seq, { v: null, s: 'no_result' });
  return { retry, held, lastError };
}

/**
 * Fills one tool column for a batch of rows, as named steps: claim → dependencies → run condition →
 * (per tool: prepare → cache → charge → run → classify) → write → follow-ups → retry. Idempotent:
 * only cells still `queued` (or `running`, left by a worker that died) are claimed, so a redelivered
 * job finds them settled and does nothing.
 */
export async function runEnrichmentJob(kernel: Kernel, job: Job, jobCtx: JobContext): Promise<void> {
  const batch = await claimBatch(kernel, job.id, job.payload as EnrichPayload);
  if (!batch) return;
  const { rows } = kernel.storage;
  const { project, column } = batch;
  const settled: Settled = new Map();
  const sorted = sortByDependencies(batch);
  const open = await applyRunCondition(kernel.expressions, column.runCondition, sorted.open, settled);
  const { retry, held, lastError } = await runSteps(kernel, batch, jobCtx, open, settled);

  // The results and the jobs of the columns waiting for them commit together.
  const follow = dependentJobs(kernel, batch, [...settled.keys()]);
  await writeStartingJobs(
    kernel,
    () => follow,
    (jobs) =>
      rows.writeCells(
        project.pk,
        column.no,
        [...settled].map(([seq, cell]) => ({ seq, cell })),
        follow.length ? jobs : undefined,
      ),
  );
  if (sorted.waiting.length) await rows.moveStatus(project.pk, column.no, ['running'], 'queued', sorted.waiting);
  // Rows a run's max_credits or the key's monthly cap stopped keep their old value, `pending` again.
  if (held.length) await rows.moveStatus(project.pk, column.no, ['running'], 'pending', held);
  if (retry.length) {
    // The rows that are done stay written; only these are tried again, after the queue's backoff.
    await rows.moveStatus(project.pk, column.no, ['running'], 'queued', retry);
    throw retryableError(`${retry.length} row(s) will be retried: ${lastError}`);
  }
  log.debug('enrichment batch done', { job_id: job.id, column: column.id, cells: settled.size, waiting: sorted.waiting.length });
}
