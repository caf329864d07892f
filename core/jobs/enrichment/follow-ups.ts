import { columnsReadBy } from '../../columns/column-steps.ts';
import type { Kernel } from '../../kernel.ts';
import { enqueueEnrichment } from '../../services/row-insert.ts';
import type { EnrichBatch } from './enrich-batch.ts';

/** Step 10, follow-ups: columns that read this one may have been waiting for these rows. */
export async function enqueueDependents(kernel: Kernel, batch: EnrichBatch, finished: number[]): Promise<void> {
  if (finished.length === 0) return;
  for (const dependent of batch.columns) {
    if (dependent.type !== 'tool' || dependent.no === batch.column.no) continue;
    if (columnsReadBy(dependent).has(batch.column.name)) await enqueueEnrichment(kernel, batch.project.pk, dependent, finished);
  }
}
