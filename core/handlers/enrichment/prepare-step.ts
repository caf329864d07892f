import { renderTemplate } from '../../columns/templates.ts';
import type { WaterfallStep } from '../../model.ts';
import type { AnyTool } from '../../plugins/plugin-types.ts';
import { stepPrice } from '../../plugins/tool-price.ts';
import { isEmptyValue } from '../../rows/cell-values.ts';
import type { OpenRow, ReadyRow, Settled } from '../../columns/enrich-batch.ts';

/** A step's config rendered over one row's values, and the inputs the tool requires that came out empty. */
export function renderedConfig(
  tool: Pick<AnyTool, 'requires'>,
  config: Record<string, unknown>,
  values: Record<string, unknown>,
): { config: Record<string, unknown>; missing: string[] } {
  const rendered = renderTemplate(config, values) as Record<string, unknown>;
  return { config: rendered, missing: tool.requires.filter((f) => isEmptyValue(rendered[f])) };
}

export interface StepPlan {
  /** Rows the step's tool runs on. */
  ready: ReadyRow[];
  /** Rows this step cannot take (an input it requires is empty) that a later step may. */
  passOn: OpenRow[];
}

/**
 * Step 4, prepare: renders the step's config over each open row. A row missing an input the tool
 * requires goes on to the next step (or ends `skipped` at the last one); a row whose spend would pass
 * the column's per-row credit cap ends `no_result`. No I/O: it decides, and writes what it
 * settles into `settled`.
 */
export function prepareStep(
  o: {
    jobId: string;
    stepIndex: number;
    isLast: boolean;
    step: WaterfallStep;
    tool: AnyTool;
    maxCreditsPerRow: number | null;
    spent: Map<number, number>;
  },
  open: OpenRow[],
  settled: Settled,
): StepPlan {
  const price = stepPrice(o.tool, o.step.config);
  const ready: ReadyRow[] = [];
  const passOn: OpenRow[] = [];
  for (const row of open) {
    const { config, missing } = renderedConfig(o.tool, o.step.config, row.values);
    if (missing.length) {
      if (o.isLast) settled.set(row.row.seq, { v: null, s: 'skipped', e: `missing input: ${missing.join(', ')}` });
      else passOn.push(row);
      continue;
    }
    if (o.maxCreditsPerRow !== null && price > 0 && (o.spent.get(row.row.seq) ?? 0) + price > o.maxCreditsPerRow) {
      settled.set(row.row.seq, { v: null, s: 'no_result', e: `stopped at the credit cap of ${o.maxCreditsPerRow} per row` });
      continue;
    }
    ready.push({
      ...row,
      item: { rowId: String(row.row.seq), config, row: row.values },
      chargeKey: `enrich:${o.jobId}:${row.row.seq}:${o.stepIndex}`,
    });
  }
  return { ready, passOn };
}
