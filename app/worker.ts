import { loadConfig } from '../core/config.ts';
import { log } from '../core/log.ts';
import { startOutboxRelay } from '../core/jobs/job-outbox.ts';
import { closeKernel, createKernel, startWorkers } from './service.ts';

/**
 * `bun run worker`: a worker process alone (no port). With REDIS_URL it shares the job stream with
 * every other worker and API process; SIGTERM stops taking jobs and lets running ones finish.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.redisUrl) {
    log.warn('no REDIS_URL: this worker has its own in-process queue and will only see jobs it enqueues; set REDIS_URL to share work');
  }
  const kernel = await createKernel(config);
  const stopPublishing = startWorkers(kernel);
  const stopRelay = startOutboxRelay(kernel);
  log.info('worker started', { worker: kernel.queue.workerId, concurrency: config.workerConcurrency });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('worker shutting down', { worker: kernel.queue.workerId, signal });
    stopRelay();
    stopPublishing();
    await closeKernel(kernel);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  log.error('worker start-up failed', { error: (e as Error).message });
  process.exit(1);
});
