import { loadConfig } from '../core/config.ts';
import { startOutboxRelay } from '../core/jobs/outbox-relay.ts';
import { log } from '../core/log.ts';
import { runProcess } from './process-signals.ts';
import { closeKernel, createKernel, startWorkers } from './service.ts';

/**
 * `bun run worker`: a worker process alone (no port). With Redis (REDIS_URL or REDIS_SENTINELS) it shares the job stream with
 * every other worker and API process; SIGTERM stops taking jobs and lets running ones finish.
 */
runProcess('worker', async () => {
  const config = loadConfig();
  if (!config.redis) {
    log.warn(
      'no REDIS_URL or REDIS_SENTINELS: this worker has its own in-process queue and will only see jobs it enqueues; configure Redis to share work',
    );
  }
  const kernel = await createKernel(config);
  const stopPublishing = startWorkers(kernel);
  const stopRelay = startOutboxRelay(kernel);
  log.info('worker started', { worker: kernel.queue.workerId, concurrency: config.workerConcurrency });
  return {
    async stop(signal) {
      log.info('worker shutting down', { worker: kernel.queue.workerId, signal });
      stopRelay();
      stopPublishing();
      await closeKernel(kernel);
    },
  };
});
