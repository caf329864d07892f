import { planRules } from '../../plans.ts';
import type { AnyBuilder } from '../../plugins/plugin-types.ts';

const count = (n: number): string => n.toLocaleString('en-US');

/** A run that stopped at the builder's own limit while its source had more rows. */
export function builderLimitWarning(builder: AnyBuilder, rows: number): string {
  return `stopped at ${count(rows)} rows: ${builder.name} writes at most ${count(builder.maxRows)} rows per project and the source has more; the rows written are kept — split the source and import the rest into another project`;
}

/** A run that stopped at the plan's rows per project while its source had more rows. */
export function planLimitWarning(plan: string, rows: number): string {
  const limit = planRules(plan).maxRowsPerProject ?? rows;
  return `stopped at ${count(rows)} rows: the ${plan} plan holds at most ${count(limit)} rows per project and the source has more; the rows written are kept — delete rows or change plan, then add the rest`;
}

/** How many rows of a page fit when only those that add a row (`adds`) take room: up to, not including, the first new row past it. */
export function fittingRows(adds: boolean[], room: number): number {
  let taken = 0;
  for (let i = 0; i < adds.length; i++) {
    if (!adds[i]) continue;
    if (taken === room) return i;
    taken++;
  }
  return adds.length;
}
