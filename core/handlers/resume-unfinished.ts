import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { BUILDER_RUN_JOB, ICP_SCORE_JOB } from '../jobs/job-names.ts';
import { enrichmentJobs } from '../services/row-insert.ts';
import { writeStartingJobs } from '../jobs/job-outbox.ts';

/**
 * The in-process queue dies with its process: after a crash (or SIGKILL) its cells would stay
 * `queued`/`running` and its builder runs `running` for ever. On start, before any request is
 * taken, this process queues that work again. Builder pages resume from their checkpoint and
 * cells are claimed by status, so nothing is written twice; but a cell that was running when the
 * process died runs again under a new job, and a tool priced per attempt charges it again.
 * It assumes this process is the only one on the database: processes that share a database must
 * share a Redis queue (REDIS_URL), whose jobs outlive their process and are taken over by the queue.
 */
export async function resumeUnfinishedWork(kernel: Kernel): Promise<{ builds: number; cells: number }> {
  const { projects, rows } = kernel.storage;
  // Jobs left in the outbox are for work this resume queues again from its state.
  await kernel.storage.outbox.clear();
  let cells = 0;
  for (const { projectPk, colNo } of await rows.unfinishedColumns()) {
    const column = (await projects.columns(projectPk)).find((c) => c.no === colNo && c.type === 'tool');
    const project = await projects.getByPk(projectPk);
    if (!column || !project) continue;
    const seqs = await writeStartingJobs(
      kernel,
      (moved: number[]) => enrichmentJobs(kernel, project, column, moved),
      (jobs) => rows.moveStatus(projectPk, colNo, ['queued', 'running'], 'queued', undefined, jobs),
    );
    cells += seqs.length;
  }
  const builds = await projects.unfinishedBuilds();
  for (const pk of builds) {
    const tenant = (await projects.getByPk(pk))?.workspaceId;
    await kernel.queue.enqueue(BUILDER_RUN_JOB, { project_pk: pk }, tenant ? { tenant } : {});
  }
  // Score runs continue after their last recorded page.
  const scoreRuns = await kernel.storage.icpScoreRuns.unfinished();
  for (const id of scoreRuns) await kernel.queue.enqueue(ICP_SCORE_JOB, { run_id: id });
  if (cells || builds.length || scoreRuns.length)
    log.info('resumed work left by a previous run', { builds: builds.length, cells, score_runs: scoreRuns.length });
  return { builds: builds.length, cells };
}
