import type { Kernel } from '../../kernel.ts';
import type { AnyTool } from '../../plugins/plugin-types.ts';
import type { EnrichBatch, ReadyRow, Settled } from './enrich-batch.ts';

const entryOf = (batch: EnrichBatch, tool: AnyTool, r: ReadyRow, idemKey: string) => ({
  idemKey,
  projectId: batch.project.id,
  jobId: batch.jobId,
  columnId: batch.column.id,
  rowId: String(r.row.seq),
  pluginId: tool.id,
});

/**
 * Step 6, charge: each row pays the tool's price before it runs (one idempotency key per row, step
 * and job: a retried job does not pay twice). A row the balance cannot pay for ends
 * `insufficient_credits`. Answers the rows paid for.
 */
export async function chargeRows(
  kernel: Kernel,
  batch: EnrichBatch,
  tool: AnyTool,
  ready: ReadyRow[],
  spent: Map<number, number>,
  settled: Settled,
): Promise<ReadyRow[]> {
  const price = Math.max(0, tool.cost.credits);
  if (price === 0 || ready.length === 0) return ready;
  const paid = await kernel.storage.credits.chargeMany(
    batch.project.workspaceId,
    price,
    ready.map((r) => entryOf(batch, tool, r, r.chargeKey)),
  );
  return ready.filter((r) => {
    if (paid.has(r.chargeKey)) {
      spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) + price);
      return true;
    }
    settled.set(r.row.seq, { v: null, s: 'insufficient_credits', e: `needs ${price} credits; add credits, then run the column again` });
    return false;
  });
}

/** Tools paid per result give the credit back for rows where they found nothing. */
export async function refundRows(
  kernel: Kernel,
  batch: EnrichBatch,
  tool: AnyTool,
  rows: ReadyRow[],
  spent: Map<number, number>,
): Promise<void> {
  const price = Math.max(0, tool.cost.credits);
  for (const r of rows) {
    await kernel.storage.credits.refund(batch.project.workspaceId, price, entryOf(batch, tool, r, `${r.chargeKey}:refund`));
    spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) - price);
  }
}
