import type { SpendStop } from '../../credits/credit-types.ts';
import type { Kernel } from '../../kernel.ts';
import type { AnyTool } from '../../plugins/plugin-types.ts';
import type { EnrichBatch, ReadyRow, Settled } from '../../columns/enrich-batch.ts';

const entryOf = (batch: EnrichBatch, tool: AnyTool, r: ReadyRow, idemKey: string) => ({
  idemKey,
  projectId: batch.project.id,
  jobId: batch.jobId,
  columnId: batch.column.id,
  rowId: String(r.row.seq),
  pluginId: tool.id,
});

/** A row a cap stopped: `pending` again, or queued again when its run's cap has room for `price` after refunds. */
export interface HeldRow {
  seq: number;
  runId: string | undefined;
  by: SpendStop;
  price: number;
}

/** Rows of one run that either start now (caps apply) or already paid an earlier step (they finish their steps). */
function groups(
  batch: EnrichBatch,
  ready: ReadyRow[],
  spent: Map<number, number>,
): { runId?: string; enforce: boolean; rows: ReadyRow[] }[] {
  const byKey = new Map<string, { runId?: string; enforce: boolean; rows: ReadyRow[] }>();
  for (const r of ready) {
    const runId = batch.runOf.get(r.row.seq);
    const enforce = !spent.has(r.row.seq); // paid (and maybe refunded) an earlier step of this job: it finishes
    const key = `${runId ?? ''}:${enforce}`;
    const group = byKey.get(key) ?? { ...(runId ? { runId } : {}), enforce, rows: [] };
    group.rows.push(r);
    byKey.set(key, group);
  }
  return [...byKey.values()];
}

/**
 * Step 6, charge: each row pays the tool's price before it runs (one idempotency key per row, step
 * and job: a retried job does not pay twice), within the limits of the run that queued it (its
 * `max_credits`, its key's monthly cap). A row the balance cannot pay for ends `insufficient_credits`;
 * a row a cap stops is held. A row that already paid an earlier waterfall step is not stopped by a
 * cap (it finishes its steps; the balance still bounds it), so a cap never leaves a cell half paid.
 * Answers the rows paid for and those held.
 */
export async function chargeRows(
  kernel: Kernel,
  batch: EnrichBatch,
  step: { tool: AnyTool; price: number },
  ready: ReadyRow[],
  spent: Map<number, number>,
  settled: Settled,
): Promise<{ paid: ReadyRow[]; held: HeldRow[] }> {
  const { tool, price } = step;
  if (price === 0 || ready.length === 0) return { paid: ready, held: [] };
  const run: ReadyRow[] = [];
  const held: HeldRow[] = [];
  for (const group of groups(batch, ready, spent)) {
    const { paid, stoppedBy } = await kernel.storage.credits.chargeMany(
      batch.project.workspaceId,
      price,
      group.rows.map((r) => entryOf(batch, tool, r, r.chargeKey)),
      group.runId ? { id: group.runId, enforce: group.enforce } : undefined,
    );
    for (const r of group.rows) {
      if (paid.has(r.chargeKey)) {
        spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) + price);
        run.push(r);
      } else if (stoppedBy === 'balance' || stoppedBy === null) {
        settled.set(r.row.seq, { v: null, s: 'insufficient_credits', e: `needs ${price} credits; add credits, then run the column again` });
      } else {
        held.push({ seq: r.row.seq, runId: group.runId, by: stoppedBy, price });
      }
    }
  }
  return { paid: run, held };
}

/** Credits a row gets back after its step: see `refundOf` (core/plugins/tool-price.ts). */
export interface Refund {
  row: ReadyRow;
  credits: number;
}

/**
 * Gives back what settled rows did not use — a per-result tool's price when it found nothing, a
 * per-unit tool's unused units — to the run and key that paid.
 */
export async function refundRows(
  kernel: Kernel,
  batch: EnrichBatch,
  tool: AnyTool,
  refunds: Refund[],
  spent: Map<number, number>,
): Promise<void> {
  for (const { row: r, credits } of refunds) {
    const runId = batch.runOf.get(r.row.seq);
    await kernel.storage.credits.refund(batch.project.workspaceId, credits, entryOf(batch, tool, r, `${r.chargeKey}:refund`), {
      charge: r.chargeKey,
      ...(runId ? { runId } : {}),
    });
    spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) - credits);
  }
}
