import { type BuilderRunScope, releaseBuilderCredits, reserveBuilderCredits } from '../credits/charges.ts';
import { ServiceError } from '../errors.ts';
import { writeStartingJobs } from '../jobs/job-outbox.ts';
import type { Kernel } from '../kernel.ts';
import type { ExecutionLogEntry, Project } from '../model.ts';
import { BUILDER_RUN_JOB } from '../jobs/job-names.ts';
import { plannedBuild } from '../services/projects.ts';
import type { ScheduleRecord } from '../ports/storage.ts';

/** The log keeps its newest entries (as core/handlers/run-builder.ts does). */
const LOG_LIMIT = 200;

/**
 * Starts a project's builder again at a due time of its schedule, and answers what happened in
 * words (the schedule's last_outcome). Only new rows are added: the run skips rows whose unique
 * key the project holds. Never two runs at once: while one is queued or running, the due time is
 * skipped (checked in the same statement that starts the run). A paying builder reserves this run's
 * credits as a new project's run does; a balance too short skips the due time.
 */
export async function startScheduledRun(kernel: Kernel, project: Project, schedule: ScheduleRecord, dueAt: number): Promise<string> {
  const skip = async (why: string) => {
    // While a run is under way its job owns the log; a skip then shows in the schedule only.
    if (!['queued', 'running'].includes(project.builderStatus)) {
      await kernel.storage.projects.setBuilderState(project.pk, {
        builderStatus: project.builderStatus,
        log: [...project.executionLog, entry('skipped', `scheduled run skipped: ${why}`)].slice(-LOG_LIMIT),
      });
    }
    return `skipped: ${why}`;
  };
  if (['queued', 'running'].includes(project.builderStatus)) return skip('the previous run was still going');
  if (project.settings.uniqueColumns.length === 0) return skip('the project has no unique_columns, so a run would add every row again');
  const workspace = await kernel.storage.workspaces.get(project.workspaceId);
  if (!workspace || !project.builderId) return skip('the project has no builder');
  const form = (await kernel.storage.projects.formData(project.pk)) as Record<string, unknown>;
  let planned: Awaited<ReturnType<typeof plannedBuild>>;
  try {
    planned = await plannedBuild(kernel, workspace, { builder_id: project.builderId, form_data: form });
  } catch (e) {
    return skip(e instanceof ServiceError ? String(typeof e.detail === 'string' ? e.detail : e.detail.message) : (e as Error).message);
  }
  const { builder, target } = planned;
  const run = `s${dueAt}`;
  const paid = builder.cost.credits > 0 ? await kernel.storage.credits.projectNet(project.id, builder.id) : 0;
  const scope: BuilderRunScope = { run, rowsBefore: Math.round(paid / Math.max(1, builder.cost.credits)) };
  try {
    await reserveBuilderCredits(kernel, workspace.id, project.id, builder, target, schedule.keyId ?? undefined, scope);
  } catch (e) {
    // A short balance, or the monthly cap of the key that set the schedule: this due time is skipped, saying so.
    if (e instanceof ServiceError && e.code === 'insufficient_credits') return skip(String((e.detail as { message: string }).message));
    throw e;
  }
  let started: boolean;
  try {
    started = await writeStartingJobs(
      kernel,
      () => [{ type: BUILDER_RUN_JOB, payload: { project_pk: project.pk }, tenant: project.workspaceId }],
      (jobs) =>
        kernel.storage.projects.restartBuilder(
          project.pk,
          {
            builderStatus: 'queued',
            builderError: null,
            builderProgress: { rows_created: 0, target },
            checkpoint: { rows_created: 0, pages: 0, run, rows_before: scope.rowsBefore },
            log: [
              ...project.executionLog,
              entry('scheduled', `scheduled run (${schedule.cron}, ${schedule.timezone}): adds rows whose unique key is new`),
            ].slice(-LOG_LIMIT),
          },
          jobs,
        ),
    );
  } catch (e) {
    // Not started: the reservation goes back, whatever went wrong.
    await releaseBuilderCredits(kernel, workspace.id, project.id, builder, scope);
    throw e;
  }
  if (!started) {
    await releaseBuilderCredits(kernel, workspace.id, project.id, builder, scope);
    return 'skipped: a run started meanwhile';
  }
  return 'started';
}

const entry = (step: ExecutionLogEntry['step'], message: string): ExecutionLogEntry => ({ at: new Date().toISOString(), step, message });
