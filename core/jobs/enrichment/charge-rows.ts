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
  keyId: batch.limits.keyId ?? null,
});

/**
 * Step 6, charge: each row pays the tool's price before it runs (one idempotency key per row, step
 * and job: a retried job does not pay twice), within the run's `max_credits` and the key's monthly
 * cap. A row the balance cannot pay for ends `insufficient_credits`; a row a cap stops is held: it
 * goes back to `pending` with its old value, for a later run. Answers the rows paid for and those held.
 */
export async function chargeRows(
  kernel: Kernel,
  batch: EnrichBatch,
  tool: AnyTool,
  ready: ReadyRow[],
  spent: Map<number, number>,
  settled: Settled,
): Promise<{ paid: ReadyRow[]; held: ReadyRow[] }> {
  const price = Math.max(0, tool.cost.credits);
  if (price === 0 || ready.length === 0) return { paid: ready, held: [] };
  const { paid, stoppedBy } = await kernel.storage.credits.chargeMany(
    batch.project.workspaceId,
    price,
    ready.map((r) => entryOf(batch, tool, r, r.chargeKey)),
    batch.limits,
  );
  const held: ReadyRow[] = [];
  const run = ready.filter((r) => {
    if (paid.has(r.chargeKey)) {
      spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) + price);
      return true;
    }
    if (stoppedBy === 'balance') {
      settled.set(r.row.seq, { v: null, s: 'insufficient_credits', e: `needs ${price} credits; add credits, then run the column again` });
    } else {
      held.push(r);
    }
    return false;
  });
  return { paid: run, held };
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
    await kernel.storage.credits.refund(
      batch.project.workspaceId,
      price,
      entryOf(batch, tool, r, `${r.chargeKey}:refund`),
      batch.limits.budgetId,
    );
    spent.set(r.row.seq, (spent.get(r.row.seq) ?? 0) - price);
  }
}
