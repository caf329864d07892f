import { count, need, UsageError } from '../args.ts';
import type { AdminCommand, CommandInput, JobsAccess } from '../command.ts';

/** The job commands work on the shared Redis queue; the in-process queue lives inside the server. */
async function withJobs<T>(command: string, input: CommandInput, use: (jobs: JobsAccess) => Promise<T>): Promise<T> {
  if (!input.config.redis || !input.openJobs) {
    throw new UsageError(
      `${command} needs REDIS_URL or REDIS_SENTINELS: without Redis the queue lives inside the server process (see GET /metrics there)`,
    );
  }
  const jobs = await input.openJobs(input.config);
  try {
    return await use(jobs);
  } finally {
    await jobs.close();
  }
}

export const jobsStats: AdminCommand = {
  usage: 'jobs:stats                      (needs Redis)',
  run: (input) =>
    withJobs('jobs:stats', input, async ({ queue, board }) => {
      const { waiting, delayed, pending, dead } = await queue.stats();
      const workers = (await board.all()).map(({ workerId, running, processed, failed, deadLettered, latency }) => ({
        worker: workerId,
        running,
        processed,
        failed,
        dead_lettered: deadLettered,
        mean_latency_ms: latency.count ? Math.round(latency.sumMs / latency.count) : null,
      }));
      return { waiting, delayed, pending, dead, workers };
    }),
};

export const jobsDead: AdminCommand = {
  usage: 'jobs:dead [--limit N]',
  run: (input) =>
    withJobs('jobs:dead', input, async ({ queue }) => ({
      dead: await queue.listDead(input.values.limit ? count(String(input.values.limit), 'limit') : 50),
    })),
};

export const jobsRetry: AdminCommand = {
  usage: 'jobs:retry --id JOB_ID | --all',
  run: (input) =>
    withJobs('jobs:retry', input, async ({ queue }) => {
      const id = input.values.id === true || input.values.all ? 'all' : need(input.values, 'id');
      return { retried: await queue.retryDead(id) };
    }),
};
