import { type BuilderRunScope, runScopeOf, settleBuilderCredits } from '../../credits/charges.ts';
import type { Kernel } from '../../kernel.ts';
import type { BuilderCheckpoint, ExecutionLogEntry, Project } from '../../model.ts';
import { planRules } from '../../plans.ts';
import { pluginContext } from '../../plugins/plugin-context.ts';
import type { AnyBuilder, BuilderRunContext } from '../../plugins/plugin-types.ts';
import type { Job, JobContext } from '../../ports/queue.ts';
import { PageWrites } from './page-writes.ts';
import { failRun, tellBuilderEnded, uploadOf } from './run-events-and-uploads.ts';

/** The log keeps its newest entries; a long run does not grow the project record without bound. */
export const LOG_LIMIT = 200;

/** One attempt of a builder run: what it found, and where it stands. */
export interface BuilderRun {
  kernel: Kernel;
  job: Job;
  jobCtx: JobContext;
  project: Project;
  builder: AnyBuilder;
  form: Record<string, unknown>;
  upload: { id: string } | undefined;
  /** The rows the run aims at, bounded by the builder's and the plan's limits. */
  target: number;
  /** The credit run this builder run reserved under (a scheduled run's own), if any. */
  scope: BuilderRunScope | undefined;
  scoped: { run?: string; rows_before?: number };
  ctx: BuilderRunContext;
  logEntries: ExecutionLogEntry[];
  /** Rows of the source still to skip: a resumed run without a plugin cursor replays it. */
  skip: number;
  created: number;
  pages: number;
  /** The checkpoint as this attempt found or last wrote it: its next page commits only over it. */
  lastCheckpoint: BuilderCheckpoint | null;
  /** Set when a row limit cut the source short: the warning the run ends with. */
  stopped?: string;
  pending: PageWrites;
}

/**
 * A cancelled run (core/services/work-tasks.ts) pays for the rows its checkpoint says were written
 * (pages commit with it) and gets the rest of its reservation back; settling is idempotent, so the
 * attempt that finds it cancelled settles, whichever.
 */
export async function settleCancelled(kernel: Kernel, project: Project): Promise<void> {
  const builder = project.builderId ? kernel.plugins.builder(project.builderId) : undefined;
  if (!builder) return;
  const written = project.builderCheckpoint?.rows_created ?? 0;
  await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, written, runScopeOf(project.builderCheckpoint));
}

/** Adds a step to the run's log (the newest LOG_LIMIT kept) and answers the log to store. */
export function note(run: Pick<BuilderRun, 'logEntries'>, entry: Omit<ExecutionLogEntry, 'at'>): ExecutionLogEntry[] {
  run.logEntries.push({ at: new Date().toISOString(), ...entry });
  if (run.logEntries.length > LOG_LIMIT) run.logEntries.splice(0, run.logEntries.length - LOG_LIMIT);
  return run.logEntries;
}

/**
 * The run's first step: the project and its builder (gone, finished or uninstalled: nothing to do,
 * or a failed run that says why), its form and file, its target, and `running` with a log line —
 * `resumed` when an earlier attempt wrote pages.
 */
export async function openRun(kernel: Kernel, job: Job, jobCtx: JobContext): Promise<BuilderRun | null> {
  const { project_pk } = job.payload as { project_pk: number };
  const { projects } = kernel.storage;
  const project = await projects.getByPk(project_pk);
  // Gone (deleted), or already finished by an earlier delivery: nothing to do.
  if (!project?.builderId || !['queued', 'running'].includes(project.builderStatus)) {
    if (project?.builderStatus === 'cancelled') await settleCancelled(kernel, project);
    return null;
  }
  const builder = kernel.plugins.builder(project.builderId);
  const logEntries: ExecutionLogEntry[] = [...project.executionLog];
  if (!builder) {
    const error = `builder "${project.builderId}" is no longer installed`;
    await tellBuilderEnded(kernel, project, job.id, { status: 'failed', rows_created: 0, error });
    await projects.setBuilderState(project.pk, {
      builderStatus: 'failed',
      builderError: error,
      log: note({ logEntries }, { step: 'failed', message: `builder "${project.builderId}" is not installed`, attempt: job.attempt }),
    });
    return null;
  }
  const form = (await projects.formData(project.pk)) as Record<string, unknown>;
  const upload = await uploadOf(kernel, project, builder, form);
  if (upload === null) {
    const message = 'the uploaded file of this import is gone (deleted, or imported already): upload it again';
    await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, 0, runScopeOf(project.builderCheckpoint));
    await failRun(kernel, project, job.id, message, note({ logEntries }, { step: 'failed', message, attempt: job.attempt }), null);
    return null;
  }
  // The rows the run aims at, as the project's creation counted them: the plan's rows per project bound them too.
  const plan = (await kernel.storage.workspaces.get(project.workspaceId))?.plan ?? 'free';
  const target = Math.min(builder.target(form, upload), builder.maxRows, planRules(plan).maxRowsPerProject ?? Number.POSITIVE_INFINITY);
  const checkpoint: BuilderCheckpoint = project.builderCheckpoint ?? { rows_created: 0, pages: 0 };
  const resuming = project.builderStatus === 'running' && checkpoint.pages > 0;
  const scope = runScopeOf(checkpoint);
  const run: BuilderRun = {
    kernel,
    job,
    jobCtx,
    project,
    builder,
    form,
    upload,
    target,
    scope,
    scoped: scope ? { run: scope.run, rows_before: scope.rowsBefore } : {},
    ctx: {
      ...pluginContext(kernel, builder, jobCtx.signal, { job_id: job.id, worker: jobCtx.workerId }),
      pageRows: kernel.storage.rows.bulkRows,
      ...(upload ? { upload: { ...upload, text: () => kernel.storage.uploads.read(upload.id) } } : {}),
      ...(resuming && checkpoint.cursor !== undefined ? { resume: { cursor: checkpoint.cursor } } : {}),
    },
    logEntries,
    skip: resuming && checkpoint.cursor === undefined ? checkpoint.rows_created : 0,
    created: checkpoint.rows_created,
    pages: checkpoint.pages,
    lastCheckpoint: project.builderCheckpoint,
    pending: new PageWrites(kernel.storage.rows.bulkLanes, checkpoint.rows_created, checkpoint.pages),
  };
  await projects.setBuilderState(project.pk, {
    builderStatus: 'running',
    builderError: null,
    builderProgress: { rows_created: checkpoint.rows_created, target },
    log: note(
      run,
      resuming
        ? {
            step: 'resumed',
            message: `resumed after ${checkpoint.rows_created} rows (attempt ${job.attempt})`,
            attempt: job.attempt,
            total_rows: checkpoint.rows_created,
          }
        : { step: 'started', message: `${builder.name}: aiming at ${target} rows`, attempt: job.attempt },
    ),
  });
  return run;
}
