import type { Kernel } from '../../kernel.ts';
import { log } from '../../log.ts';
import type { ExecutionLogEntry, Project } from '../../model.ts';
import type { AnyBuilder } from '../../plugins/plugin-types.ts';
import { tellWebhooks } from '../../webhooks/events.ts';

/**
 * builder.completed / builder.failed for the workspace's webhooks, told before the run's end is
 * written: a crash in between runs the end again, and the event's key — the run's job, whose id
 * every redelivery keeps and every run (a schedule's too) has its own — makes it one.
 */
export async function tellBuilderEnded(
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

/** Ends a run as failed: its webhook event, then its state with the message a user can act on. */
export async function failRun(
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

/**
 * The uploaded file a builder's form names (`upload_id`, builders that declare `uploads`), as the
 * run reads it; undefined when the form names none, null when it is gone (or not this workspace's).
 */
export async function uploadOf(kernel: Kernel, project: Project, builder: AnyBuilder, form: Record<string, unknown>) {
  if (!builder.uploads || typeof form.upload_id !== 'string') return undefined;
  const upload = await kernel.storage.uploads.get(project.workspaceId, form.upload_id);
  return upload?.completedAt && upload.projectId === project.id ? upload : null;
}

/** An import's file, deleted once its run has ended (its rows are in the project now). */
export async function forgetUpload(kernel: Kernel, uploadId: string): Promise<void> {
  await kernel.storage.uploads
    .remove(uploadId)
    .catch((e) => log.warn('an uploaded file could not be deleted', { upload_id: uploadId, error: (e as Error).message }));
}
