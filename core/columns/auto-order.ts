import type { WaterfallStep } from '../model.ts';
import type { ToolStats } from '../ports/storage.ts';

/** Attempts under which a step's figures say too little: it is tried first until it has them. */
export const MIN_ATTEMPTS = 20;
/** A step tried less than this share of the most-tried step's attempts is explored (tried first) again. */
export const EXPLORE_SHARE = 0.1;

/**
 * Credits per result found so far: a tool that has never found anything is last (Infinity), even a
 * free one or one paid per result (all refunded); free tools that find cost 0.
 */
export function creditsPerResult(s: Pick<ToolStats, 'credits' | 'found' | 'attempts'>): number {
  if (s.found === 0) return s.attempts > 0 ? Number.POSITIVE_INFINITY : 0;
  return Math.max(0, s.credits) / s.found;
}

/**
 * The order a waterfall with `order: "auto"` tries its steps (docs/enrichment.md): steps whose figures are
 * thin, or have fallen far behind the others' (fewer than EXPLORE_SHARE of the most-tried step's
 * attempts), first, so every step keeps fresh figures; then by credits per result found in this
 * workspace, cheapest first (ties: the better hit rate, then the listed order). Pure: the figures
 * come from GET /tools/{tool_id}/stats's store.
 */
export function autoOrder(steps: WaterfallStep[], stats: Map<string, ToolStats>): WaterfallStep[] {
  const figures = steps.map((step, listed) => {
    const s = stats.get(step.tool_id);
    return { step, listed, attempts: s?.attempts ?? 0, cost: s ? creditsPerResult(s) : 0, hit: s?.attempts ? s.found / s.attempts : 0 };
  });
  const most = Math.max(...figures.map((f) => f.attempts));
  const explore = (f: (typeof figures)[number]) => f.attempts < MIN_ATTEMPTS || f.attempts < most * EXPLORE_SHARE;
  return figures
    .sort((a, b) => {
      const ea = explore(a);
      const eb = explore(b);
      if (ea !== eb) return ea ? -1 : 1;
      if (ea) return a.listed - b.listed;
      return a.cost - b.cost || b.hit - a.hit || a.listed - b.listed;
    })
    .map((f) => f.step);
}
