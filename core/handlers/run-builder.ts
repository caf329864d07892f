import { isStoreUnavailable } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import { tellWebhooks } from '../webhooks/events.ts';
import { type BuilderRunState, StaleBuilderRun } from '../ports/storage.ts';
import { log } from '../log.ts';
import { pluginContext } from '../plugins/plugin-context.ts';
import type { BuilderCheckpoint, Cell, Column, ExecutionLogEntry, Project } from '../model.ts';
import { planRules } from '../plans.ts';
import type { AnyBuilder, BuilderPage, BuilderRunContext, BuiltRow } from '../plugins/plugin-types.ts';
import { ProviderError } from '../plugins/provider-http.ts';
import { runScopeOf, settleBuilderCredits } from '../credits/charges.ts';
import { rowRoom } from '../services/quotas.ts';
import { addsRows, insertRows } from '../services/row-insert.ts';
import { breathe } from '../jobs/breathe.ts';
import { PageWrites } from './page-writes.ts';
import { type Job, type JobContext, retryableError } from '../ports/queue.ts';
import { awaitProviderBudget } from '../ports/rate-limiter.ts';

/** The log keeps its newest entries; a long run does not grow the project record without bound. */
const LOG_LIMIT = 200;

function toCells(rows: BuiltRow[], byName: Map<string, Column>): Record<number, Cell>[] {
  return rows.map((row) => {
    const out: Record<number, Cell> = {};
    for (const [name, value] of Object.entries(row)) {
      const col = byName.get(name);
      if (col && col.type === 'input') out[col.no] = { v: value ?? null };
    }
    return out;
  });
}

const asPage = (p: BuiltRow[] | BuilderPage): BuilderPage => (Array.isArray(p) ? { rows: p } : p);

const count = (n: number): string => n.toLocaleString('en-US');

/** A run that stopped at the builder's own limit while its source had more rows. */
function builderLimitWarning(builder: AnyBuilder, rows: number): string {
  return `stopped at ${count(rows)} rows: ${builder.name} writes at most ${count(builder.maxRows)} rows per project and the source has more; the rows written are kept — split the source and import the rest into another project`;
}

/** A run that stopped at the plan's rows per project while its source had more rows. */
function planLimitWarning(plan: string, rows: number): string {
  const limit = planRules(plan).maxRowsPerProject ?? rows;
  return `stopped at ${count(rows)} rows: the ${plan} plan holds at most ${count(limit)} rows per project and the source has more; the rows written are kept — delete rows or change plan, then add the rest`;
}

/**
 * Runs a project's builder: pages of rows from the plugin are written as they come, each page
 * together with the run's checkpoint, so a run taken over after a crash resumes where the last
 * page ended and never writes a row twice. Ends `completed` or `failed` with a message a user can
 * act on; every step goes into `lead_gen_execution_log`.
 */
export async function runBuilderJob(kernel: Kernel, job: Job, jobCtx: JobContext): Promise<void> {
  const { project_pk } = job.payload as { project_pk: number };
  const { projects } = kernel.storage;
  const project = await projects.getByPk(project_pk);
  // Gone (deleted), or already finished by an earlier delivery: nothing to do.
  if (!project?.builderId || !['queued', 'running'].includes(project.builderStatus)) return;
  const builder = kernel.plugins.builder(project.builderId);
  const logEntries: ExecutionLogEntry[] = [...project.executionLog];
  const note = (entry: Omit<ExecutionLogEntry, 'at'>) => {
    logEntries.push({ at: new Date().toISOString(), ...entry });
    if (logEntries.length > LOG_LIMIT) logEntries.splice(0, logEntries.length - LOG_LIMIT);
    return logEntries;
  };
  if (!builder) {
    await tellBuilderEnded(kernel, project, job.id, {
      status: 'failed',
      rows_created: 0,
      error: `builder "${project.builderId}" is no longer installed`,
    });
    await projects.setBuilderState(project.pk, {
      builderStatus: 'failed',
      builderError: `builder "${project.builderId}" is no longer installed`,
      log: note({ step: 'failed', message: `builder "${project.builderId}" is not installed`, attempt: job.attempt }),
    });
    return;
  }

  const form = (await projects.formData(project.pk)) as Record<string, unknown>;
  const upload = await uploadOf(kernel, project, builder, form);
  if (upload === null) {
    const message = 'the uploaded file of this import is gone (deleted, or imported already): upload it again';
    await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, 0, runScopeOf(project.builderCheckpoint));
    await failRun(kernel, project, job.id, message, note({ step: 'failed', message, attempt: job.attempt }), null);
    return;
  }
  // The rows the run aims at, as the project's creation counted them: the plan's rows per project bound them too.
  const plan = (await kernel.storage.workspaces.get(project.workspaceId))?.plan ?? 'free';
  const target = Math.min(builder.target(form, upload), builder.maxRows, planRules(plan).maxRowsPerProject ?? Number.POSITIVE_INFINITY);
  const checkpoint: BuilderCheckpoint = project.builderCheckpoint ?? { rows_created: 0, pages: 0 };
  const resuming = project.builderStatus === 'running' && checkpoint.pages > 0;
  const scope = runScopeOf(checkpoint);
  const scoped = scope ? { run: scope.run, rows_before: scope.rowsBefore } : {};
  await projects.setBuilderState(project.pk, {
    builderStatus: 'running',
    builderError: null,
    builderProgress: { rows_created: checkpoint.rows_created, target },
    log: note(
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

  const ctx: BuilderRunContext = {
    ...pluginContext(kernel, builder, jobCtx.signal, { job_id: job.id, worker: jobCtx.workerId }),
    pageRows: kernel.storage.rows.bulkRows,
    ...(upload ? { upload: { ...upload, text: () => kernel.storage.uploads.read(upload.id) } } : {}),
    ...(resuming && checkpoint.cursor !== undefined ? { resume: { cursor: checkpoint.cursor } } : {}),
  };
  // Without a plugin cursor, a resumed run replays the plugin and skips the rows already written.
  let skip = resuming && checkpoint.cursor === undefined ? checkpoint.rows_created : 0;
  let created = checkpoint.rows_created;
  let pages = checkpoint.pages;
  /** The checkpoint as this attempt found or last wrote it: its next page commits only over it. */
  let lastCheckpoint: BuilderCheckpoint | null = project.builderCheckpoint;
  /** Set when a row limit cut the source short: the warning the run ends with. */
  let stopped: string | undefined;
  const pending = new PageWrites(kernel.storage.rows.bulkLanes, checkpoint.rows_created, checkpoint.pages);
  try {
    await awaitProviderBudget(kernel.rateLimiter, builder, ctx.providerMode, ctx.signal);
    for await (const raw of builder.run(form, ctx)) {
      // This attempt timed out (a retry has the run now) or the worker is stopping: stop here, quietly.
      if (jobCtx.signal.aborted) {
        await pending.settle();
        log.info('builder attempt stopped: its time is up or the worker is stopping', { job_id: job.id, worker: jobCtx.workerId });
        return;
      }
      const page = asPage(raw);
      let rows = page.rows;
      if (skip > 0) {
        const dropped = Math.min(skip, rows.length);
        rows = rows.slice(dropped);
        skip -= dropped;
        if (rows.length === 0) continue;
      }
      // Read again for each page: the project may have been deleted, or its unique key set, meanwhile.
      const current = await projects.getByPk(project.pk);
      if (!current) {
        await pending.settle();
        log.info('builder run stopped: project deleted', { job_id: job.id, worker: jobCtx.workerId });
        await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, pending.committed, scope);
        return;
      }
      const columns = await projects.columns(project.pk);
      // A page goes in beside the one before only when it reads nothing that one writes (no unique
      // key to check) and starts no jobs; otherwise the pages before it commit first.
      const beside = current.settings.uniqueColumns.length === 0 && !columns.some((c) => c.type === 'tool' && c.autoRun);
      if (!beside) await pending.drain();
      const plan = (await kernel.storage.workspaces.get(project.workspaceId))?.plan ?? 'free';
      // `created` counts the pages still being written; the plan's room does not yet.
      const builderRoom = builder.maxRows - created;
      let planRoom = (await rowRoom(kernel, plan, project.pk)) - pending.rows;
      if (planRoom < rows.length && pending.rows > 0) {
        await pending.drain();
        planRoom = await rowRoom(kernel, plan, project.pk);
      }
      const room = Math.max(0, Math.min(builderRoom, planRoom));
      let cells = toCells(rows, new Map(columns.map((c) => [c.name, c])));
      // Only rows that add a row count against the room: those whose unique key is new.
      const adds = await addsRows(kernel, current, columns, cells);
      const fits = fittingRows(adds, room);
      // The source holds more than may be written: keep what fits, then stop and say so.
      if (fits < cells.length) {
        stopped = builderRoom <= planRoom ? builderLimitWarning(builder, created + room) : planLimitWarning(plan, created + room);
        cells = cells.slice(0, fits);
        rows = rows.slice(0, fits);
      }
      if (cells.length === 0) break;
      // Counted once written: a page refused (a value over MAX_CELL_BYTES) is neither counted nor paid;
      // rows whose unique key the project holds already are not written, so neither counted nor paid.
      let written: { after: { pages: number; created: number }; entry: ExecutionLogEntry; checkpoint: BuilderCheckpoint } | undefined;
      const pageState = (added: number): BuilderRunState => {
        const after = { pages: pages + 1, created: created + added };
        const skipped = rows.length - added;
        const entry: ExecutionLogEntry = {
          at: new Date().toISOString(),
          step: 'page',
          message: `page ${after.pages}: ${added} rows written${skipped ? `, ${skipped} already in the project (unique key)` : ''}`,
          page: after.pages,
          rows: added,
          total_rows: after.created,
        };
        const next: BuilderCheckpoint = {
          rows_created: after.created,
          pages: after.pages,
          ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
          ...scoped,
        };
        written = { after, entry, checkpoint: next };
        return {
          builderStatus: 'running',
          builderProgress: { rows_created: after.created, target },
          checkpoint: next,
          checkpointWas: lastCheckpoint,
          log: [...logEntries, entry].slice(-LOG_LIMIT),
        };
      };
      if (beside) {
        // Written beside the pages before it; its state follows theirs (BuilderRunState.after).
        const state = pageState(cells.length);
        await pending.add(cells.length, (after) =>
          insertRows(kernel, current, columns, cells, { builderState: { ...state, ...(after ? { after } : {}) } }),
        );
      } else {
        await insertRows(kernel, current, columns, cells, { builderState: pageState });
        pending.wrote((written as NonNullable<typeof written>).after.created - created);
      }
      const done = written as NonNullable<typeof written>;
      lastCheckpoint = done.checkpoint;
      note(done.entry);
      const after = done.after;
      ({ pages, created } = after);
      if (stopped) break;
      await breathe();
      // The plugin fetches its next page when asked for it: spend the provider budget first.
      await awaitProviderBudget(kernel.rateLimiter, builder, ctx.providerMode, ctx.signal);
    }
    await pending.drain();
    await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, created, scope);
    // A run cut short by a limit still completes (its rows are kept), with a warning shown in builder_status.
    if (stopped) {
      note({ step: 'warning', message: stopped, total_rows: created });
      log.warn('builder run stopped at a row limit', {
        job_id: job.id,
        worker: jobCtx.workerId,
        project_id: project.id,
        builder: builder.id,
        rows: created,
      });
    }
    await tellBuilderEnded(kernel, project, job.id, {
      status: 'completed',
      rows_created: created,
      error: null,
      warning: stopped ?? null,
    });
    await projects.setBuilderState(project.pk, {
      builderStatus: 'completed',
      builderError: null,
      builderProgress: null,
      checkpoint: null,
      log: note({ step: 'completed', message: `${created} rows in ${pages} pages`, total_rows: created }),
    });
    if (upload) await forgetUpload(kernel, upload.id);
    log.info('builder run completed', {
      job_id: job.id,
      worker: jobCtx.workerId,
      project_id: project.id,
      builder: builder.id,
      rows: created,
    });
  } catch (e) {
    // Pages still being written end first: the run reports, and logs, only what committed.
    await pending.settle();
    created = pending.committed;
    const unwritten = logEntries.filter((entry) => entry.step === 'page' && (entry.page ?? 0) > pending.committedPages);
    for (const entry of unwritten) logEntries.splice(logEntries.indexOf(entry), 1);
    // Another attempt of this run wrote a page since this one's last: that attempt carries the run.
    if (e instanceof StaleBuilderRun) {
      log.info('builder attempt stopped: another attempt carries the run', { job_id: job.id, worker: jobCtx.workerId });
      return;
    }
    const message = e instanceof Error ? e.message : String(e);
    // The database went away: the checkpoint holds, so the retry resumes once it is back.
    if (isStoreUnavailable(e)) throw retryableError(`database unreachable: ${message}`);
    const retryable = e instanceof ProviderError ? e.retryable : false;
    if (retryable && !jobCtx.lastAttempt) {
      // The checkpoint is already saved with the last page: the retry continues from there.
      await projects.setBuilderState(project.pk, {
        builderStatus: 'running',
        log: note({ step: 'retry', message: `will retry: ${message}`, attempt: job.attempt, error: message }),
      });
      throw retryableError(message);
    }
    await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, created, scope);
    await failRun(
      kernel,
      project,
      job.id,
      message,
      note({ step: 'failed', message: 'run failed', attempt: job.attempt, error: message, total_rows: created }),
      { rows_created: created, target },
    );
    if (upload) await forgetUpload(kernel, upload.id);
    log.warn('builder run failed', {
      job_id: job.id,
      worker: jobCtx.workerId,
      project_id: project.id,
      builder: builder.id,
      error: message,
    });
  }
}

/**
 * builder.completed / builder.failed for the workspace's webhooks, told before the run's end is
 * written: a crash in between runs the end again, and the event's key — the run's job, whose id
 * every redelivery keeps and every run (a schedule's too) has its own — makes it one.
 */
async function tellBuilderEnded(
  kernel: Kernel,
  project: Project,
  jobId: string,
  outcome: { status: 'completed' | 'failed'; rows_created: number; error: string | null; warning?: string | null },
): Promise<void> {
  await tellWebhooks(kernel, project.workspaceId, `builder.${outcome.status}`, `${project.id}:${jobId}`, {
    project_id: project.id,
    name: project.name,
    builder_id: project.builderId,
    ...outcome,
  });
}

/**
 * The uploaded file a builder's form names (`upload_id`, builders that declare `uploads`), as the
 * run reads it; undefined when the form names none, null when it is gone (or not this workspace's).
 */
async function uploadOf(kernel: Kernel, project: Project, builder: AnyBuilder, form: Record<string, unknown>) {
  if (!builder.uploads || typeof form.upload_id !== 'string') return undefined;
  const upload = await kernel.storage.uploads.get(project.workspaceId, form.upload_id);
  return upload?.completedAt && upload.projectId === project.id ? upload : null;
}

/** An import's file, deleted once its run has ended (its rows are in the project now). */
async function forgetUpload(kernel: Kernel, uploadId: string): Promise<void> {
  await kernel.storage.uploads
    .remove(uploadId)
    .catch((e) => log.warn('an uploaded file could not be deleted', { upload_id: uploadId, error: (e as Error).message }));
}

/** How many rows of a page fit when only those that add a row (`adds`) take room: up to, not including, the first new row past it. */
export function fittingRows(adds: boolean[], room: number): number {
  let taken = 0;
  for (let i = 0; i < adds.length; i++) {
    if (!adds[i]) continue;
    if (taken === room) return i;
    taken++;
  }
  return adds.length;
}

async function failRun(
  kernel: Kernel,
  project: Project,
  jobId: string,
  message: string,
  logEntries: ExecutionLogEntry[],
  progress: Project['builderProgress'],
): Promise<void> {
  await tellBuilderEnded(kernel, project, jobId, { status: 'failed', rows_created: progress?.rows_created ?? 0, error: message });
  await kernel.storage.projects.setBuilderState(project.pk, {
    builderStatus: 'failed',
    builderError: message,
    builderProgress: progress,
    checkpoint: null,
    log: logEntries,
  });
}
