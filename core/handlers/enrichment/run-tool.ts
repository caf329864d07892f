import type { Kernel } from '../../kernel.ts';
import type { AnyTool, EnrichResult, ToolContext, ToolItem } from '../../plugins/plugin-types.ts';
import { cellValueProblem, type SizeLimits } from '../../rows/cell-limits.ts';
import { awaitProviderBudget } from '../../ports/rate-limiter.ts';

/** A found value too large (or not JSON-exact) for a cell becomes that row's error, never a stored giant. */
export function fitsACell(result: EnrichResult, limits: SizeLimits): EnrichResult {
  if (result.status !== 'ok') return result;
  const problem = cellValueProblem(result.value, limits);
  return problem ? { status: 'error', error: `the result ${problem}`, retryable: false } : result;
}

/**
 * Step 7, run: the step's tool over the items, in the tool's batch size, within its provider's rate
 * limit. A batch that throws becomes an error result for each of its rows (retryable as the error
 * says), so the batches that did finish keep their results.
 */
export async function runTool(
  kernel: Kernel,
  tool: AnyTool,
  items: ToolItem<Record<string, unknown>>[],
  ctx: ToolContext,
): Promise<EnrichResult[]> {
  const out: EnrichResult[] = [];
  for (let i = 0; i < items.length; i += tool.batchSize) {
    // A stopped job (its project deleted, the queue closing) calls the tool no more.
    if (ctx.signal.aborted) throw ctx.signal.reason;
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
