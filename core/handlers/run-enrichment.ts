import type { Kernel } from '../kernel.ts';
import type { CellMeta } from '../model.ts';
import type { AnyTool } from '../plugins/plugin-types.ts';
import type { ToolRunFigures } from '../ports/storage.ts';
import { log } from '../log.ts';
import { webhookEventJobs } from '../webhooks/event-job.ts';
import { toolContext } from '../plugins/plugin-context.ts';
import { applyRunCondition } from './enrichment/apply-condition.ts';
import { chargeRows, type HeldRow, refundRows } from './enrichment/charge-rows.ts';
import { claimBatch } from './enrichment/claim-batch.ts';
import { classifyResults } from './enrichment/classify-results.ts';
import type { EnrichBatch, OpenRow, Settled } from '../columns/enrich-batch.ts';
import { dependentJobs } from './enrichment/follow-ups.ts';
import { columnsReadBy } from '../columns/column-steps.ts';
import { enrichmentJobs } from '../services/row-insert.ts';
import { writeStartingJobs } from '../jobs/job-outbox.ts';
import { prepareStep } from './enrichment/prepare-step.ts';
import { cacheTtlMs, reuseCached } from '../columns/result-cache.ts';
import { runTool } from './enrichment/run-tool.ts';
import { stepPrice } from '../plugins/tool-price.ts';
import { sortByDependencies } from './enrichment/sort-rows.ts';
import { type Job, type JobContext, retryableError } from '../ports/queue.ts';
import type { EnrichPayload } from '../jobs/job-names.ts';

/** What the steps decided beyond the cells: rows to retry or hold, and what each tool did. */
interface StepsOutcome {
  retry: number[];
  /** Rows a cap stopped. */
  held: HeldRow[];
  lastError: string;
  /** The longest Retry-After a retried row's provider gave (0: none): the job's retry waits at least that. */
  retryAfterMs: number;
  /** Provenance of each settled row: the tool that settled it, when, and whether from the cache. */
  sources: Map<number, Omit<CellMeta, 'credits'>>;
  /** Net credits each row cost. */
  spent: Map<number, number>;
  figures: ToolRunFigures[];
}

const source = (tool: AnyTool, at: number, cached: boolean): Omit<CellMeta, 'credits'> => ({
  tool_id: tool.id,
  provider: tool.provider?.id ?? tool.id,
  fetched_at: new Date(at).toISOString(),
  cached,
});

/**
 * Runs the column's steps (one tool, or a waterfall) over the open rows: prepare → cache → charge →
 * run → classify, step after step, until every row is settled, waits for a retry, or the steps end.
 */
async function runSteps(kernel: Kernel, batch: EnrichBatch, jobCtx: JobContext, open: OpenRow[], settled: Settled): Promise<StepsOutcome> {
  const out: StepsOutcome = { retry: [], held: [], lastError: '', retryAfterMs: 0, sources: new Map(), spent: new Map(), figures: [] };
  const { spent } = out; // credits each row has cost this run (the per-row cap)
  for (const [position, step] of batch.steps.entries()) {
    if (open.length === 0) break;
    const tool = kernel.plugins.tool(step.tool_id);
    if (!tool) {
      for (const o of open) settled.set(o.row.seq, { v: null, s: 'error', e: `tool "${step.tool_id}" is not installed` });
      return out;
    }
    const isLast = position === batch.steps.length - 1;
    const stepIndex = batch.listedIndex[position] ?? position;
    const plan = prepareStep(
      { jobId: batch.jobId, stepIndex, isLast, step, tool, maxCreditsPerRow: batch.column.maxCreditsPerRow, spent },
      open,
      settled,
    );
    const cached = await reuseCached(kernel, batch.project.workspaceId, tool, plan.ready, settled);
    for (const [seq, at] of cached.hits) out.sources.set(seq, source(tool, at, true));
    const price = stepPrice(tool, step.config);
    const { paid, held } = await chargeRows(kernel, batch, { tool, price }, cached.ready, spent, settled);
    out.held.push(...held);
    const ctx = toolContext(kernel, tool, jobCtx.signal, { job_id: batch.jobId, worker: jobCtx.workerId, column: batch.column.id });
    const started = performance.now();
    const results = await runTool(
      kernel,
      tool,
      paid.map((r) => r.item),
      ctx,
    );
    const latencyMs = performance.now() - started;
    const fetchedAt = Date.now();
    for (const r of paid) out.sources.set(r.row.seq, source(tool, fetchedAt, false));
    const outcome = classifyResults(
      { tool, config: step.config, isLast, lastAttempt: jobCtx.lastAttempt, cacheKeys: cached.keys },
      paid,
      results,
      settled,
    );
    await refundRows(kernel, batch, tool, outcome.refund, spent);
    const ttl = cacheTtlMs(kernel, tool);
    if (outcome.toCache.length && ttl > 0) await kernel.storage.cache.putMany(outcome.toCache, ttl, fetchedAt);
    out.retry.push(...outcome.retry.map((r) => r.row.seq));
    if (outcome.retry.length) out.lastError = outcome.lastError;
    out.retryAfterMs = Math.max(out.retryAfterMs, outcome.retryAfterMs);
    // What this tool did, for its stats and `order: "auto"`: rows it settled or passed on (not those retried later).
    const attempts = paid.length - outcome.retry.length;
    out.figures.push({
      toolId: tool.id,
      attempts,
      found: outcome.found,
      credits: price * attempts - outcome.refund.reduce((sum, r) => sum + r.credits, 0),
      latencyMs: paid.length ? (latencyMs * attempts) / paid.length : 0,
    });
    open = [...plan.passOn, ...outcome.next];
  }
  for (const o of open) if (!settled.has(o.row.seq)) settled.set(o.row.seq, { v: null, s: 'no_result' });
  return out;
}

/**
 * Rows a cap stopped. Those whose run's `max_credits` has room again for their step (refunds gave
 * credits back) are queued again, under the same run; the others go back to `pending` with their old value, and
 * so do the cells of columns that read this one and were waiting for them (they would wait for ever).
 */
async function releaseHeld(kernel: Kernel, batch: EnrichBatch, held: HeldRow[]): Promise<void> {
  const { rows } = kernel.storage;
  const { project, column } = batch;
  const again: number[] = [];
  const room = new Map<string, number>();
  for (const h of held) {
    if (h.by !== 'run_cap' || !h.runId) continue;
    if (!room.has(h.runId)) {
      const run = await kernel.storage.credits.run(h.runId);
      room.set(h.runId, run?.cap == null ? 0 : run.cap - run.spent);
    }
    // All of them, while one more fits: each new job charges at least one, so this ends.
    if ((room.get(h.runId) ?? 0) >= h.price) again.push(h.seq);
  }
  const requeued = new Set(again);
  const stopped = held.filter((h) => !requeued.has(h.seq)).map((h) => h.seq);
  if (again.length) {
    await writeStartingJobs(
      kernel,
      (moved: number[]) => enrichmentJobs(kernel, project, column, moved),
      (jobs) => rows.moveStatus(project.pk, column.no, ['running'], 'queued', again, jobs),
    );
  }
  if (stopped.length === 0) return;
  await rows.moveStatus(project.pk, column.no, ['running'], 'pending', stopped);
  for (const dependent of batch.columns) {
    if (dependent.type === 'tool' && dependent.no !== column.no && columnsReadBy(dependent).has(column.name)) {
      await rows.moveStatus(project.pk, dependent.no, ['queued'], 'pending', stopped);
    }
  }
}

/** Statuses of a cell whose value is not known yet. */
const UNSETTLED = new Set(['pending', 'queued', 'running']);

/**
 * Rows sent back to wait for columns they read, looked at again once queued: while this job held
 * them, the cells they read may have changed. Those that went from queued or running to `pending`
 * (a cap stopped them; their job moved the waiting cells to `pending` before these were queued
 * again) go to `pending` too; those now settled get a job of their own (the follow-up their column
 * sent may have found them held here). Either way no cell waits for ever.
 */
async function unstall(kernel: Kernel, batch: EnrichBatch, waiting: number[]): Promise<void> {
  const { project, column } = batch;
  const reads = columnsReadBy(column);
  const deps = batch.columns.filter((c) => c.type === 'tool' && c.no !== column.no && reads.has(c.name));
  const before = new Map(batch.rows.map((r) => [r.seq, r]));
  const now = await kernel.storage.rows.getMany(
    project.pk,
    waiting,
    deps.map((d) => d.no),
  );
  const stalled: number[] = [];
  const ready: number[] = [];
  for (const r of now) {
    const stopped = deps.some((d) => {
      const was = before.get(r.seq)?.cells[d.no]?.s ?? 'pending';
      return (was === 'queued' || was === 'running') && (r.cells[d.no]?.s ?? 'pending') === 'pending';
    });
    if (stopped) stalled.push(r.seq);
    else if (deps.every((d) => !UNSETTLED.has(r.cells[d.no]?.s ?? 'pending'))) ready.push(r.seq);
  }
  // Cells another job took meanwhile (and holds for its retry) are its own: left to it.
  const mine = { jobId: batch.jobId, hold: false };
  if (stalled.length) await kernel.storage.rows.moveHeld(project.pk, column.no, stalled, ['queued'], 'pending', mine);
  if (ready.length) {
    await writeStartingJobs(
      kernel,
      (queued: number[]) => enrichmentJobs(kernel, project, column, queued),
      (jobs) => kernel.storage.rows.moveHeld(project.pk, column.no, ready, ['queued'], 'queued', mine, jobs),
    );
  }
}

/**
 * Fills one tool column for a batch of rows, as named steps: claim → dependencies → run condition →
 * (per tool: prepare → cache → charge → run → classify) → write → follow-ups → retry. Idempotent:
 * only cells still `queued` (or `running` in this job, left by a worker that died) are claimed, so
 * a redelivered job finds them settled and does nothing.
 */
export async function runEnrichmentJob(kernel: Kernel, job: Job, jobCtx: JobContext): Promise<void> {
  const batch = await claimBatch(kernel, job.id, job.payload as EnrichPayload);
  if (!batch) return;
  const { rows } = kernel.storage;
  const { project, column } = batch;
  const settled: Settled = new Map();
  const sorted = sortByDependencies(batch);
  const open = await applyRunCondition(kernel.expressions, column.runCondition, sorted.open, settled);
  const { retry, held, lastError, retryAfterMs, sources, spent, figures } = await runSteps(kernel, batch, jobCtx, open, settled);
  // Provenance: each cell a tool settled keeps which tool, when, what it cost and whether cached.
  for (const [seq, cell] of settled) {
    const from = sources.get(seq);
    if (from) cell.m = { ...from, credits: Math.max(0, spent.get(seq) ?? 0) };
  }

  // The results, the jobs of the columns waiting for them and of the webhooks told of them commit together.
  const follow = [
    ...dependentJobs(kernel, batch, [...settled.keys()]),
    ...(await webhookEventJobs(kernel, project, column, [...settled.keys()])),
  ];
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
  await kernel.storage.toolStats
    .add(project.workspaceId, figures)
    .catch((e) => log.warn('could not record tool stats', { column: column.id, error: (e as Error).message }));
  if (sorted.waiting.length) {
    await rows.moveStatus(project.pk, column.no, ['running'], 'queued', sorted.waiting);
    await unstall(kernel, batch, sorted.waiting);
  }
  if (held.length) await releaseHeld(kernel, batch, held);
  if (retry.length) {
    // The rows that are done stay written; only these are tried again, after the queue's backoff or
    // the provider's Retry-After, whichever is longer (core/jobs/retry-policy.ts).
    // Still held by this job: no other job runs (and charges) them before its retry.
    await rows.moveHeld(project.pk, column.no, retry, ['running'], 'queued', { jobId: job.id, hold: true });
    throw retryableError(`${retry.length} row(s) will be retried: ${lastError}`, retryAfterMs || undefined);
  }
  log.debug('enrichment batch done', { job_id: job.id, column: column.id, cells: settled.size, waiting: sorted.waiting.length });
}
