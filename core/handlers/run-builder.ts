import { log } from '../log.ts';
import { breathe } from '../jobs/breathe.ts';
import type { Kernel } from '../kernel.ts';
import type { Job, JobContext } from '../ports/queue.ts';
import { awaitProviderBudget } from '../ports/rate-limiter.ts';
import { openRun } from './builder/builder-run.ts';
import { completeRun, endOnError, projectGone } from './builder/end-run.ts';
import { asPage, writePage } from './builder/write-page.ts';

/**
 * Runs a project's builder, in named steps (core/handlers/builder/): open the run, write each page
 * of rows the plugin yields with the run's checkpoint — so a run taken over after a crash resumes
 * where the last page ended and never writes a row twice — then complete it, or end it on its
 * error with a message a user can act on. Every step goes into `lead_gen_execution_log`.
 */
export async function runBuilderJob(kernel: Kernel, job: Job, jobCtx: JobContext): Promise<void> {
  const run = await openRun(kernel, job, jobCtx);
  if (!run) return;
  const budget = () => awaitProviderBudget(kernel.rateLimiter, run.builder, run.ctx.providerMode, run.ctx.signal);
  try {
    await budget();
    for await (const raw of run.builder.run(run.form, run.ctx)) {
      // This attempt timed out (a retry has the run now) or the worker is stopping: stop here, quietly.
      if (jobCtx.signal.aborted) {
        await run.pending.settle();
        log.info('builder attempt stopped: its time is up or the worker is stopping', { job_id: job.id, worker: jobCtx.workerId });
        return;
      }
      const outcome = await writePage(run, asPage(raw));
      if (outcome === 'gone') return projectGone(run);
      if (outcome === 'stop') break;
      if (outcome === 'skipped') continue;
      await breathe();
      // The plugin fetches its next page when asked for it: spend the provider budget first.
      await budget();
    }
    await completeRun(run);
  } catch (e) {
    await endOnError(run, e);
  }
}
