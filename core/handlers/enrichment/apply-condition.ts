import { conditionsHold } from '../../columns/run-condition.ts';
import type { Expressions } from '../../expressions/expression-pool.ts';
import type { OpenRow, Settled } from '../../columns/enrich-batch.ts';

/**
 * Step 3, run condition: rows whose condition is false (or fails, or runs over its bounds in the
 * expression sandbox) are settled `skipped` with the reason; the rest stay open.
 */
export async function applyRunCondition(
  expressions: Expressions,
  condition: string | null,
  open: OpenRow[],
  settled: Settled,
): Promise<OpenRow[]> {
  if (!condition || open.length === 0) return open;
  const verdicts = await conditionsHold(
    expressions,
    condition,
    open.map((o) => o.values),
  );
  return open.filter((o, i) => {
    const verdict = verdicts[i];
    if (verdict?.holds) return true;
    settled.set(o.row.seq, { v: null, s: 'skipped', e: verdict?.reason });
    return false;
  });
}
