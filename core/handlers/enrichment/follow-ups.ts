import { columnsReadBy } from '../../columns/column-steps.ts';
import type { Kernel } from '../../kernel.ts';
import { enrichmentJobs } from '../../services/row-insert.ts';
import type { JobRequest } from '../../jobs/job-outbox.ts';
import type { EnrichBatch } from '../../columns/enrich-batch.ts';

/**
 * Step 10, follow-ups: columns that read this one may have been waiting for these rows; their jobs
 * go with the results (`writeCells`). Their cells keep the run that queued them (its limits).
 */
export function dependentJobs(kernel: Kernel, batch: EnrichBatch, finished: number[]): JobRequest[] {
  if (finished.length === 0) return [];
  const jobs: JobRequest[] = [];
  for (const dependent of batch.columns) {
    if (dependent.type !== 'tool' || dependent.no === batch.column.no) continue;
    if (columnsReadBy(dependent).has(batch.column.name)) jobs.push(...enrichmentJobs(kernel, batch.project, dependent, finished));
  }
  return jobs;
}
