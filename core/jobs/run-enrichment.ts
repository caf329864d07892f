import { type Static, Type } from '@sinclair/typebox';
import { conditionsHold } from '../columns/run-condition.ts';
import { referencedColumns, renderTemplate } from '../columns/templates.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { toolContext } from '../plugins/plugin-context.ts';
import type { Cell, CellStatus, Column, StoredRow, WaterfallStep } from '../model.ts';
import type { AnyTool, EnrichResult, ToolContext, ToolItem } from '../plugins/plugin-types.ts';
import { cellValueProblem, type SizeLimits } from '../rows/cell-limits.ts';
import { isEmptyValue } from '../rows/cell-keys.ts';
import { enqueueEnrichment } from '../services/row-insert.ts';
import { type Job, type JobContext, retryableError } from './queue.ts';
import { awaitProviderBudget } from './rate-limiter.ts';

/** Statuses of a cell whose value is not known yet; a column that reads it waits. */
const UNSETTLED: CellStatus[] = ['pending', 'queued', 'running'];

/** A row still looking for a value, and (once its step's config is rendered) what the step needs. */
interface Open {
  row: StoredRow;
  values: Record<string, unknown>;
}
interface Pending extends Open {
  item: ToolItem<Record<string, unknown>>;
  /** Idempotency key of this row's charge for this step of this job. */
  chargeKey: string;
}

export const EnrichPayloadSchema = Type.Object({
  project_pk: Type.Integer({ minimum: 1 }),
  col_no: Type.Integer({ minimum: 1 }),
  seqs: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 }),
});
export type EnrichPayload = Static<typeof EnrichPayloadSchema>;

function rowValues(columns: Column[], row: StoredRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c.name] = row.cells[c.no]?.v ?? null;
  return out;
}

/**
 * Runs one step's tool over the items, in the tool's batch size, within its provider's rate limit.
 * A batch that throws becomes an error result for each of its rows (retryable as the error says),
 * so the batches that did finish keep their results.
 */
async function runTool(kernel: Kernel, tool: AnyTool, items: ToolItem<Record<string, unknown>>[], ctx: ToolContext): Promise<EnrichResult[]> {
  const out: EnrichResult[] = [];
  for (let i = 0; i < items.length; i += tool.batchSize) {
    const batch = items.slice(i, i + tool.batchSize);
    try {
      await awaitProviderBudget(kernel.rateLimiter, tool, ctx.providerMode, ctx.signal);
      const results = await tool.enrich(batch, ctx);
      if (results.length !== batch.length) throw new Error(`tool ${tool.id} returned ${results.length} results for ${batch.length} rows`);
      out.push(...results.map((r) => fitsACell(r, kernel.config.limits)));
    } catch (e) {
      const retryable = (e as { retryable?: unknown }).retryable === true;
      out.push(...batch.map(() => ({ status: 'error', error: (e as Error).message, retryable }) as EnrichResult));
    }
  }
  return out;
}

/** A found value too large (or not JSON-exact) for a cell becomes that row's error, never a stored giant. */
function fitsACell(result: EnrichResult, limits: SizeLimits): EnrichResult {
  if (result.status !== 'ok') return result;
  const problem = cellValueProblem(result.value, limits);
  return problem ? { status: 'error', error: `the result ${problem}`, retryable: false } : result;
}

/** The cache key of a result: per workspace (results may hold its data), mode and tool version. */
function cacheKeyOf(workspaceId: string, mode: string, tool: AnyTool, key: string): string {
  return `${workspaceId}:${mode}:${tool.id}@${tool.version}:${key}`;
}

/**
 * Fills one tool column for a batch of rows. Idempotent: only cells still `queued` (or `running`,
 * left by a worker that died) are taken; a redelivered job finds them settled and does nothing.
 */
export async function runEnrichmentJob(kernel: Kernel, job: Job, jobCtx: JobContext, maxAttempts = kernel.config.jobMaxAttempts): Promise<void> {
  const { project_pk, col_no, seqs } = job.payload as EnrichPayload;
  const { projects, rows } = kernel.storage;
  const project = await projects.getByPk(project_pk);
  if (!project) return;
  const columns = await projects.columns(project_pk);
  const column = columns.find((c) => c.no === col_no && c.type === 'tool');
  if (!column) return;
  const claimed = await rows.moveStatus(project_pk, col_no, ['queued', 'running'], 'running', seqs);
  if (claimed.length === 0) return;

  const byName = new Map(columns.map((c) => [c.name, c]));
  const steps: WaterfallStep[] = column.waterfall ?? [{ tool_id: column.toolId ?? '', config: (column.config ?? {}) as Record<string, unknown> }];
  const deps = [...new Set(steps.flatMap((s) => [...referencedColumns(s.config)]))]
    .map((name) => byName.get(name))
    .filter((c): c is Column => c !== undefined && c.type === 'tool' && c.no !== col_no);
  // Tool values live with their keys: read them for every other tool column (run conditions and formulas may use any).
  const loaded = await rows.getMany(project_pk, claimed, columns.filter((c) => c.type === 'tool' && c.no !== col_no).map((c) => c.no));

  const settled = new Map<number, Cell>();
  const waiting: number[] = [];
  let open: Open[] = [];
  for (const row of loaded) {
    if (deps.some((d) => UNSETTLED.includes(row.cells[d.no]?.s ?? 'pending'))) waiting.push(row.seq);
    else open.push({ row, values: rowValues(columns, row) });
  }
  if (column.runCondition && open.length) {
    const verdicts = await conditionsHold(kernel.expressions, column.runCondition, open.map((o) => o.values));
    open = open.filter((o, i) => {
      const { holds, reason } = verdicts[i] as { holds: boolean; reason?: string };
      if (!holds) settled.set(o.row.seq, { v: null, s: 'skipped', e: reason });
      return holds;
    });
  }

  const lastAttempt = job.attempt >= maxAttempts;
  const spent = new Map<number, number>(); // credits each row has cost this run (waterfall cap)
  const retryLater: number[] = [];
  let lastError = '';
  for (const [i, step] of steps.entries()) {
    if (open.length === 0) break;
    const tool = kernel.plugins.tool(step.tool_id);
    const isLast = i === steps.length - 1;
    if (!tool) {
      for (const o of open) settled.set(o.row.seq, { v: null, s: 'error', e: `tool "${step.tool_id}" is not installed` });
      open = [];
      break;
    }
    const ctx = toolContext(kernel, tool, jobCtx.signal, { job_id: job.id, worker: jobCtx.workerId, column: column.id });
    const price = Math.max(0, tool.cost.credits);
    let ready: Pending[] = [];
    for (const o of open) {
      const config = renderTemplate(step.config, o.values) as Record<string, unknown>;
      const missing = tool.requires.filter((f) => isEmptyValue(config[f]));
      if (missing.length) {
        if (isLast && !settled.has(o.row.seq)) settled.set(o.row.seq, { v: null, s: 'skipped', e: `missing input: ${missing.join(', ')}` });
        continue;
      }
      if (column.maxCreditsPerRow !== null && price > 0 && (spent.get(o.row.seq) ?? 0) + price > column.maxCreditsPerRow) {
        settled.set(o.row.seq, { v: null, s: 'no_result', e: `stopped at the credit cap of ${column.maxCreditsPerRow} per row` });
        continue;
      }
      ready.push({ ...o, item: { rowId: String(o.row.seq), config, row: o.values }, chargeKey: `enrich:${job.id}:${o.row.seq}:${i}` });
    }

    // A result already paid for (same cache key, not expired) is reused and costs nothing.
    const cacheKeys = new Map<number, string>();
    if (tool.cacheKey) {
      for (const r of ready) {
        const k = tool.cacheKey(r.item);
        if (k) cacheKeys.set(r.row.seq, cacheKeyOf(project.workspaceId, ctx.providerMode, tool, k));
      }
      const hits = await kernel.storage.cache.getMany([...new Set(cacheKeys.values())]);
      ready = ready.filter((r) => {
        const key = cacheKeys.get(r.row.seq);
        if (key === undefined || !hits.has(key)) return true;
        settled.set(r.row.seq, { v: hits.get(key), s: 'completed' });
        return false;
      });
    }

    if (price > 0 && ready.length) {
      const paid = await kernel.storage.credits.chargeMany(
        project.workspaceId,
        price,
        ready.map((r) => ({ idemKey: r.chargeKey, projectId: project.id, jobId: job.id, columnId: column.id, rowId: String(r.row.seq), pluginId: tool.id })),
      );
      ready = ready.filter((r) => {
        if (paid.has(r.chargeKey)) {
          spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) + price);
          return true;
        }
        settled.set(r.row.seq, { v: null, s: 'insufficient_credits', e: `needs ${price} credits; add credits, then run the column again` });
        return false;
      });
    }

    const results = await runTool(kernel, tool, ready.map((r) => r.item), ctx);
    const next: Pending[] = [];
    const toCache: { key: string; value: unknown }[] = [];
    const refunds: Pending[] = [];
    results.forEach((r, j) => {
      const o = ready[j] as Pending;
      const found = r.status === 'ok' && (!tool.isValid || tool.isValid(r.value));
      const retry = r.status === 'error' && r.retryable && !lastAttempt;
      if (!found && !retry && tool.cost.per === 'result' && price > 0) refunds.push(o);
      if (retry) {
        // Worth another try (a 429, a 5xx, a site that timed out): this row goes back to the queue;
        // its charge stays recorded under this job's key, so the retry does not pay again.
        retryLater.push(o.row.seq);
        lastError = (r as { error: string }).error;
      } else if (found) {
        settled.set(o.row.seq, { v: (r as { value: unknown }).value, s: 'completed' });
        const key = cacheKeys.get(o.row.seq);
        if (key) toCache.push({ key, value: (r as { value: unknown }).value });
      } else if (isLast) {
        settled.set(o.row.seq, r.status === 'error' ? { v: null, s: 'error', e: r.error } : { v: null, s: 'no_result', ...(r.status === 'no_result' && r.reason ? { e: r.reason } : {}) });
      } else {
        next.push(o); // a waterfall tries the next step
      }
    });
    // Tools paid per result give the credit back when they found nothing.
    for (const o of refunds) {
      await kernel.storage.credits.refund(project.workspaceId, price, { idemKey: `${o.chargeKey}:refund`, projectId: project.id, jobId: job.id, columnId: column.id, rowId: String(o.row.seq), pluginId: tool.id });
      spent.set(o.row.seq, (spent.get(o.row.seq) ?? 0) - price);
    }
    if (toCache.length && tool.cacheTtlMs) await kernel.storage.cache.putMany(toCache, tool.cacheTtlMs);
    open = next;
  }
  for (const o of open) if (!settled.has(o.row.seq)) settled.set(o.row.seq, { v: null, s: 'no_result' });

  await rows.writeCells(project_pk, col_no, [...settled].map(([seq, cell]) => ({ seq, cell })));
  if (waiting.length) await rows.moveStatus(project_pk, col_no, ['running'], 'queued', waiting);

  // Columns that read this one may have been waiting for these rows.
  const finished = [...settled.keys()];
  for (const dependent of columns) {
    if (dependent.type !== 'tool' || dependent.no === col_no) continue;
    const dSteps = dependent.waterfall ?? [{ tool_id: dependent.toolId ?? '', config: (dependent.config ?? {}) as Record<string, unknown> }];
    if (dSteps.some((s) => referencedColumns(s.config).has(column.name))) await enqueueEnrichment(kernel, project_pk, dependent, finished);
  }
  if (retryLater.length) {
    // The rows that are done stay written; only these are tried again, after the queue's backoff.
    await rows.moveStatus(project_pk, col_no, ['running'], 'queued', retryLater);
    throw retryableError(`${retryLater.length} row(s) will be retried: ${lastError}`);
  }
  log.debug('enrichment batch done', { job_id: job.id, column: column.id, cells: settled.size, waiting: waiting.length });
}
