import { columnsReadBy } from '../../columns/column-steps.ts';
import type { CellStatus } from '../../model.ts';
import { rowValues } from '../../rows/row-view.ts';
import type { EnrichBatch, OpenRow } from '../../columns/enrich-batch.ts';

/** Statuses of a cell whose value is not known yet; a column that reads it waits. */
const UNSETTLED: CellStatus[] = ['pending', 'queued', 'running'];

/**
 * Step 2, dependencies: a row whose config reads another tool column still unsettled waits (it is
 * queued again, and the other column's job re-queues it when it settles); the others are open.
 */
export function sortByDependencies(batch: EnrichBatch): { open: OpenRow[]; waiting: number[] } {
  const reads = columnsReadBy(batch.column);
  const deps = batch.columns.filter((c) => c.type === 'tool' && c.no !== batch.column.no && reads.has(c.name));
  const open: OpenRow[] = [];
  const waiting: number[] = [];
  for (const row of batch.rows) {
    if (deps.some((d) => UNSETTLED.includes(row.cells[d.no]?.s ?? 'pending'))) waiting.push(row.seq);
    else open.push({ row, values: rowValues(batch.columns, row) });
  }
  return { open, waiting };
}
