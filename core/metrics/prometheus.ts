import { Counter, Gauge, Registry } from 'prom-client';
import type { QueueStats } from '../ports/queue.ts';
import type { Kernel } from '../kernel.ts';
import { withTimeout } from '../time-limit.ts';

/** What /metrics shows; `shared` and `outboxDepth` are absent while their store is away. */
export interface MetricsInput {
  shared?: QueueStats;
  workers: QueueStats[];
  outboxDepth?: number;
}

/** A store that does not answer by then is left out of the document (marked down), not waited for. */
const GATHER_TIMEOUT_MS = 1_000;

/** Collects the figures; a store that is away (Redis, the database) is reported down, never a 500. */
export async function gatherMetrics(kernel: Kernel): Promise<MetricsInput> {
  const within = <T>(p: Promise<T>) => withTimeout(p, GATHER_TIMEOUT_MS, 'no answer').catch(() => undefined);
  const [shared, published, outboxDepth] = await Promise.all([
    within(kernel.queue.stats()),
    within(kernel.statsBoard.all()),
    within(kernel.storage.outbox.depth()),
  ]);
  const workers = (published ?? []).filter((w) => w.workerId !== shared?.workerId);
  if (shared && kernel.config.workers > 0) workers.push(shared);
  return { shared, workers, outboxDepth };
}

/**
 * The /metrics document (Prometheus text format). Queue figures are shared (from Redis when
 * scaled out); counters are per worker process, labelled `worker`.
 */
export async function renderMetrics({ shared, workers, outboxDepth }: MetricsInput): Promise<{ contentType: string; body: string }> {
  const registry = new Registry();
  const gauge = (name: string, help: string, value: number) => {
    const g = new Gauge({ name, help, registers: [registry] });
    g.set(value);
  };
  gauge('wfs_queue_up', 'Whether the job queue answered this scrape (0 while Redis is away).', shared ? 1 : 0);
  if (shared) {
    gauge('wfs_queue_waiting_jobs', 'Jobs not yet delivered to a worker (queue depth).', shared.waiting);
    gauge('wfs_queue_delayed_jobs', 'Retries waiting for their backoff delay.', shared.delayed);
    gauge('wfs_queue_pending_jobs', 'Jobs delivered to a worker and not yet acknowledged.', shared.pending);
    gauge('wfs_queue_dead_jobs', 'Jobs in the dead-letter stream.', shared.dead);
  }
  gauge('wfs_database_up', 'Whether the database answered this scrape.', outboxDepth === undefined ? 0 : 1);
  if (outboxDepth !== undefined)
    gauge(
      'wfs_job_outbox_jobs',
      'Jobs stored by committed writes and not yet taken by the queue (grows while Redis is away).',
      outboxDepth,
    );

  const labelNames = ['worker'] as const;
  const running = new Gauge({ name: 'wfs_worker_running_jobs', help: 'Jobs running now in a worker.', labelNames, registers: [registry] });
  const counter = (name: string, help: string) => new Counter({ name, help, labelNames, registers: [registry] });
  const processed = counter('wfs_jobs_processed_total', 'Jobs completed.');
  const failed = counter('wfs_jobs_failed_total', 'Failed attempts (retried or dead-lettered).');
  const dead = counter('wfs_jobs_dead_lettered_total', 'Jobs moved to the dead-letter stream.');
  const latencySum = counter('wfs_job_latency_seconds_sum', 'Enqueue-to-done time of completed jobs, summed.');
  const latencyCount = counter('wfs_job_latency_seconds_count', 'Completed jobs timed.');
  const latencyMax = new Gauge({
    name: 'wfs_job_latency_seconds_max',
    help: 'Longest enqueue-to-done time seen.',
    labelNames,
    registers: [registry],
  });
  for (const w of workers) {
    const labels = { worker: w.workerId };
    running.set(labels, w.running);
    processed.inc(labels, w.processed);
    failed.inc(labels, w.failed);
    dead.inc(labels, w.deadLettered);
    latencySum.inc(labels, w.latency.sumMs / 1000);
    latencyCount.inc(labels, w.latency.count);
    latencyMax.set(labels, w.latency.maxMs / 1000);
  }
  return { contentType: registry.contentType, body: await registry.metrics() };
}
