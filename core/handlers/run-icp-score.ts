import { isStoreUnavailable } from '../errors.ts';
import { scoreRowsInto } from '../icp/score-tally.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { toolColumnNos } from '../services/rows.ts';
import { breathe } from '../jobs/breathe.ts';
import { type Job, type JobContext, JobError, retryableError } from '../ports/queue.ts';

/**
 * Rows per round. On SQLite every call is synchronous, so reading and then scoring + writing a
 * round each hold the process: 250 rows keep each part under ~10 ms (a GET /projects beside a
 * 100,000-row run: p50 7 ms, p99 27 ms; 1,000-row rounds gave p99 60 ms).
 */
export const SCORE_PAGE = 250;

/**
 * Scores a project against an ICP for a score run (score_icp above the inline size), page by page
 * in insertion order, writing each page's scores into the run's column and the tally plus the last
 * row into the run. Idempotent: a redelivered job resumes after the last page recorded, and a
 * page scored twice writes the same scores.
 */
export async function runIcpScoreJob(kernel: Kernel, job: Job, jobCtx: JobContext): Promise<void> {
  const { run_id } = job.payload as { run_id: string };
  const { icpScoreRuns: runs, projects, rows } = kernel.storage;
  const run = await runs.getById(run_id);
  if (!run || run.status === 'completed' || run.status === 'failed') return;
  const fields = { job_id: job.id, worker: jobCtx.workerId, run_id, project_id: run.projectId };
  const project = await projects.getByPk(run.projectPk);
  if (!project) {
    await runs.update(run.id, { status: 'failed', error: 'the project was deleted while it was being scored' });
    return;
  }
  const columns = await projects.columns(project.pk);
  const target = run.colNo === null ? undefined : columns.find((c) => c.no === run.colNo);
  if (run.colNo !== null && !target) {
    await runs.update(run.id, { status: 'failed', error: 'the score column was deleted while the project was being scored' });
    return;
  }
  const readable = columns.filter((c) => c.no !== run.colNo);
  const toolCols = toolColumnNos(readable);
  let { afterSeq, rowsDone } = run;
  const tally = run.tally;
  await runs.update(run.id, { status: 'running' });
  try {
    for (;;) {
      if (jobCtx.signal.aborted) throw retryableError('score run interrupted; it resumes after the last page written');
      if (!(await projects.isLive(project.pk))) {
        await runs.update(run.id, { status: 'failed', error: 'the project was deleted while it was being scored' });
        return;
      }
      const page = await rows.pageAfter(project.pk, afterSeq, SCORE_PAGE, toolCols);
      if (page.length === 0) break;
      await breathe();
      const cells = scoreRowsInto(tally, run.definition, readable, page);
      if (target) await rows.writeCells(project.pk, target.no, cells);
      afterSeq = page[page.length - 1]?.seq ?? afterSeq;
      rowsDone += page.length;
      await runs.update(run.id, { rowsDone, afterSeq, tally });
      if (page.length < SCORE_PAGE) break;
      await breathe();
    }
    await runs.update(run.id, { status: 'completed' });
    log.info('icp score run completed', { ...fields, rows: rowsDone, scored: tally.scored });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // The database went away, or the attempt was cut short: the checkpoint holds, the retry resumes.
    const retryable = isStoreUnavailable(e) || (e instanceof JobError && e.retryable);
    if (retryable && !jobCtx.lastAttempt) throw retryableError(message);
    await runs.update(run.id, { status: 'failed', error: message });
    // Cells still waiting would look busy for ever: hand them back to run_pending_columns.
    if (target) await rows.moveStatus(project.pk, target.no, ['queued'], 'pending');
    log.warn('icp score run failed', { ...fields, error: message });
  }
}
