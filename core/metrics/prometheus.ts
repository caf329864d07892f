import { Counter, Gauge, Registry } from 'prom-client';
import type { QueueStats } from '../jobs/queue.ts';

/**
 * The /metrics document (Prometheus text format). Queue figures are shared (from Redis when
 * scaled out); counters are per worker process, labelled `worker`.
 */
export async function renderMetrics(shared: QueueStats, workers: QueueStats[]): Promise<{ contentType: string; body: string }> {
  const registry = new Registry();
  const gauge = (name: string, help: string, value: number) => {
    const g = new Gauge({ name, help, registers: [registry] });
    g.set(value);
  };
  gauge('wfs_queue_waiting_jobs', 'Jobs not yet delivered to a worker (queue depth).', shared.waiting);
  gauge('wfs_queue_delayed_jobs', 'Retries waiting for their backoff delay.', shared.delayed);
  gauge('wfs_queue_pending_jobs', 'Jobs delivered to a worker and not yet acknowledged.', shared.pending);
  gauge('wfs_queue_dead_jobs', 'Jobs in the dead-letter stream.', shared.dead);

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
