import type { AnyTool, EnrichResult } from './plugin-types.ts';

/**
 * What one row of a tool step costs: its price before it runs, and what a settled row gives back.
 * Shared by the run (charge, refund), the estimate and plugin-testing, so that they agree.
 */

/** The units a row may use under this config (`costUnits`, at least 1; one for tools without it). */
export function maxUnits(tool: Pick<AnyTool, 'costUnits'>, config: Record<string, unknown>): number {
  if (!tool.costUnits) return 1;
  const n = Number(tool.costUnits(config));
  return Number.isFinite(n) ? Math.max(1, Math.ceil(n)) : 1;
}

/** Credits one row is charged before the tool runs: the tool's price per unit times its most units. */
export function stepPrice(tool: Pick<AnyTool, 'cost' | 'costUnits'>, config: Record<string, unknown>): number {
  return Math.max(0, tool.cost.credits) * maxUnits(tool, config);
}

/**
 * Credits a settled (not retried) row gets back: all of them when a per-result tool found nothing;
 * for a tool priced per unit, the units its result did not use (a result that does not say used one).
 */
export function refundOf(
  tool: Pick<AnyTool, 'cost' | 'costUnits'>,
  config: Record<string, unknown>,
  result: EnrichResult,
  found: boolean,
): number {
  const price = stepPrice(tool, config);
  if (price === 0) return 0;
  if (tool.cost.per === 'result') return found ? 0 : price;
  if (!tool.costUnits) return 0;
  const most = maxUnits(tool, config);
  const used = Math.min(most, Math.max(0, Math.ceil(Number.isFinite(result.units) ? (result.units as number) : 1)));
  return Math.max(0, tool.cost.credits) * (most - used);
}
