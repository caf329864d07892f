import type { Config } from '../../config.ts';
import { retryPolicy } from '../../jobs/retry-policy.ts';
import { log } from '../../log.ts';
import type { AnyTool, EnrichResult, ToolContext, ToolItem } from '../../plugins/plugin-types.ts';
import { cellValueProblem, type SizeLimits } from '../../rows/cell-limits.ts';
import { awaitProviderBudget, pauseProviderBudget, type RateLimiter } from '../../ports/rate-limiter.ts';

/** What running a tool needs of the host: the provider budgets, the cell size limits, the longest Retry-After heeded. */
export interface ToolRunDeps {
  rateLimiter: Pick<RateLimiter, 'acquire' | 'pause'>;
  config: { limits: Config['limits']; queue?: Config['queue'] };
}

/** Rows of an `enrichOne` tool in flight at once when it does not say. */
export const DEFAULT_CONCURRENCY = 5;

/** A found value too large (or not JSON-exact) for a cell becomes that row's error, never a stored giant. */
export function fitsACell(result: EnrichResult, limits: SizeLimits): EnrichResult {
  if (result.status !== 'ok') return result;
  const problem = cellValueProblem(result.value, limits);
  return problem ? { status: 'error', error: `the result ${problem}`, retryable: false } : result;
}

/** A thrown error as the result of each row it failed, retryable as it says, with the provider's Retry-After when it has one. */
function failedWith(e: unknown): EnrichResult {
  const { retryable, retryAfterMs } = e as { retryable?: unknown; retryAfterMs?: unknown };
  const wait = retryable === true && typeof retryAfterMs === 'number' && retryAfterMs > 0 ? { retryAfterMs } : {};
  return { status: 'error', error: (e as Error).message, retryable: retryable === true, ...wait };
}

/**
 * A provider that asked to wait (a retryable result or thrown error with `retryAfterMs`): its budget,
 * when the tool declares a `rateLimit`, gives no token until then (at most JOB_MAX_RETRY_DELAY_MS),
 * so the job's other rows and every other job of that provider stop asking it. The rows themselves
 * are retried by their job no sooner (run-enrichment.ts, the queue's retry policy).
 */
async function heedRetryAfter(deps: ToolRunDeps, tool: AnyTool, ctx: ToolContext, result: EnrichResult): Promise<void> {
  if (result.status !== 'error' || !result.retryable || !result.retryAfterMs || !(result.retryAfterMs > 0)) return;
  const ms = Math.min(result.retryAfterMs, retryPolicy(deps.config.queue ?? {}).maxRetryDelayMs);
  try {
    await pauseProviderBudget(deps.rateLimiter, tool, ctx.providerMode, ms);
  } catch (e) {
    log.warn('could not pause a provider budget', { tool: tool.id, error: (e as Error).message });
  }
}

/**
 * Step 7, run: the step's tool over the items, within its provider's rate limit. A batch tool
 * (`enrich`) runs in its batch size, one rate token per batch; a batch that throws becomes an error
 * result for each of its rows, so the batches that did finish keep their results. A per-row tool
 * (`enrichOne`) runs its rows with the host's concurrency, one rate token per row.
 */
export async function runTool(
  deps: ToolRunDeps,
  tool: AnyTool,
  items: ToolItem<Record<string, unknown>>[],
  ctx: ToolContext,
): Promise<EnrichResult[]> {
  if (tool.enrichOne) return enrichEach(deps, tool, items, ctx);
  const out: EnrichResult[] = [];
  for (let i = 0; i < items.length; i += tool.batchSize) {
    // A stopped job (its project deleted, the queue closing) calls the tool no more.
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const batch = items.slice(i, i + tool.batchSize);
    try {
      await awaitProviderBudget(deps.rateLimiter, tool, ctx.providerMode, ctx.signal);
      const results = await (tool.enrich as NonNullable<AnyTool['enrich']>)(batch, ctx);
      if (results.length !== batch.length) throw new Error(`tool ${tool.id} returned ${results.length} results for ${batch.length} rows`);
      out.push(...results.map((r) => fitsACell(r, deps.config.limits)));
      for (const r of results) await heedRetryAfter(deps, tool, ctx, r);
    } catch (e) {
      out.push(...batch.map(() => failedWith(e)));
      await heedRetryAfter(deps, tool, ctx, failedWith(e));
    }
  }
  return out;
}

/**
 * Each row on its own, `concurrency` at once, one provider token per row. The first thrown error
 * stops the rows not yet started: they and the failing one take it; rows answered keep their answers.
 */
async function enrichEach(deps: ToolRunDeps, tool: AnyTool, items: ToolItem<Record<string, unknown>>[], ctx: ToolContext) {
  const enrichOne = tool.enrichOne as NonNullable<AnyTool['enrichOne']>;
  const out: (EnrichResult | undefined)[] = new Array(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  let longestWait = 0; // the longest Retry-After any lane's error carried: the rows it stopped wait that long
  const lane = async () => {
    while (!failure && next < items.length && !ctx.signal.aborted) {
      const i = next++;
      try {
        await awaitProviderBudget(deps.rateLimiter, tool, ctx.providerMode, ctx.signal);
        const result = fitsACell(await enrichOne(items[i] as ToolItem<Record<string, unknown>>, ctx), deps.config.limits);
        await heedRetryAfter(deps, tool, ctx, result);
        out[i] = result;
      } catch (error) {
        failure ??= { error };
        const failed = failedWith(error);
        if (failed.status === 'error' && failed.retryAfterMs) longestWait = Math.max(longestWait, failed.retryAfterMs);
        await heedRetryAfter(deps, tool, ctx, failed);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(tool.concurrency ?? DEFAULT_CONCURRENCY, items.length) }, lane));
  // A stopped job (its project deleted, the queue closing) settles nothing more.
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const failed = failure ? failedWith(failure.error) : undefined;
  if (failed?.status === 'error' && failed.retryable && longestWait > 0) failed.retryAfterMs = longestWait;
  // Array.from, not map: rows never started are holes, which map would skip.
  return Array.from(out, (r) => r ?? (failed as EnrichResult));
}
