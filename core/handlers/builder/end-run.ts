import { settleBuilderCredits } from '../../credits/charges.ts';
import { isStoreUnavailable } from '../../errors.ts';
import { log } from '../../log.ts';
import { retryPolicy } from '../../jobs/retry-policy.ts';
import { ProviderError } from '../../plugins/provider-http.ts';
import { JobError, retryableError } from '../../ports/queue.ts';
import { pauseProviderBudget } from '../../ports/rate-limiter.ts';
import { StaleBuilderRun } from '../../ports/storage.ts';
import { type BuilderRun, note, settleCancelled } from './builder-run.ts';
import { failRun, forgetUpload, tellBuilderEnded } from './run-events-and-uploads.ts';

const fieldsOf = (run: BuilderRun) => ({
  job_id: run.job.id,
  worker: run.jobCtx.workerId,
  project_id: run.project.id,
  builder: run.builder.id,
});

/** The source is done (or a limit stopped it): pages end, credits settle, the run completes — with its warning when a limit cut it short. */
export async function completeRun(run: BuilderRun): Promise<void> {
  const { kernel, project, builder, job } = run;
  await run.pending.drain();
  await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, run.created, run.scope);
  if (run.stopped) {
    note(run, { step: 'warning', message: run.stopped, total_rows: run.created });
    log.warn('builder run stopped at a row limit', { ...fieldsOf(run), rows: run.created });
  }
  await tellBuilderEnded(kernel, project, job.id, {
    status: 'completed',
    rows_created: run.created,
    error: null,
    warning: run.stopped ?? null,
  });
  await kernel.storage.projects.setBuilderState(project.pk, {
    builderStatus: 'completed',
    builderError: null,
    builderProgress: null,
    checkpoint: null,
    log: note(run, { step: 'completed', message: `${run.created} rows in ${run.pages} pages`, total_rows: run.created }),
  });
  if (run.upload) await forgetUpload(kernel, run.upload.id);
  log.info('builder run completed', { ...fieldsOf(run), rows: run.created });
}

/** The project was deleted during the run: pages end, the credits of what was written settle. */
export async function projectGone(run: BuilderRun): Promise<void> {
  await run.pending.settle();
  log.info('builder run stopped: project deleted', { job_id: run.job.id, worker: run.jobCtx.workerId });
  await settleBuilderCredits(run.kernel, run.project.workspaceId, run.project.id, run.builder, run.pending.committed, run.scope);
}

/**
 * A failure mid-run. Pages still being written end first, and the run reports (and logs) only what
 * committed. Another attempt carrying the run, the database away (the checkpoint holds) and a
 * provider's retryable error before the last attempt are retried — no sooner than the provider's
 * Retry-After when it gave one (its budget paused as long: run-tool.ts heedRetryAfter does the same
 * for tools); anything else fails the run.
 */
export async function endOnError(run: BuilderRun, e: unknown): Promise<void> {
  const { kernel, project, builder, job, jobCtx, pending, logEntries } = run;
  await pending.settle();
  run.created = pending.committed;
  const unwritten = logEntries.filter((entry) => entry.step === 'page' && (entry.page ?? 0) > pending.committedPages);
  for (const entry of unwritten) logEntries.splice(logEntries.indexOf(entry), 1);
  if (e instanceof StaleBuilderRun) {
    const now = await kernel.storage.projects.getByPk(project.pk);
    if (now?.builderStatus === 'cancelled') {
      await settleCancelled(kernel, now);
      log.info('builder run stopped: cancelled', { ...fieldsOf(run), rows: run.created });
      return;
    }
    log.info('builder attempt stopped: another attempt carries the run', { job_id: job.id, worker: jobCtx.workerId });
    return;
  }
  const message = e instanceof Error ? e.message : String(e);
  if (isStoreUnavailable(e)) throw retryableError(`database unreachable: ${message}`);
  // A provider's error, or the host's own when the provider's budget is paused (awaitProviderBudget).
  const retryable = e instanceof ProviderError || e instanceof JobError ? e.retryable : false;
  if (retryable && !jobCtx.lastAttempt) {
    const retryAfterMs = (e as ProviderError | JobError).retryAfterMs;
    if (retryAfterMs && retryAfterMs > 0) {
      const ms = Math.min(retryAfterMs, retryPolicy(kernel.config.queue).maxRetryDelayMs);
      await pauseProviderBudget(kernel.rateLimiter, builder, run.ctx.providerMode, ms).catch((pauseError) =>
        log.warn('could not pause a provider budget', { ...fieldsOf(run), error: (pauseError as Error).message }),
      );
    }
    // The checkpoint is already saved with the last page: the retry continues from there.
    await kernel.storage.projects.setBuilderState(project.pk, {
      builderStatus: 'running',
      log: note(run, { step: 'retry', message: `will retry: ${message}`, attempt: job.attempt, error: message }),
    });
    throw retryableError(message, retryAfterMs);
  }
  await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, run.created, run.scope);
  const failed = note(run, { step: 'failed', message: 'run failed', attempt: job.attempt, error: message, total_rows: run.created });
  await failRun(kernel, project, job.id, message, failed, { rows_created: run.created, target: run.target });
  if (run.upload) await forgetUpload(kernel, run.upload.id);
  log.warn('builder run failed', { ...fieldsOf(run), error: message });
}
