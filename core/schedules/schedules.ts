import { ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Project } from '../model.ts';
import { checkCron, type CronSpec, nextRunAfter } from './cron.ts';
import type { ScheduleRecord } from '../ports/storage.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const scheduleView = (s: ScheduleRecord) => ({
  cron: s.cron,
  timezone: s.timezone,
  next_run_at: iso(s.nextRunAt) as string,
  last_run_at: iso(s.lastRunAt),
  last_outcome: s.lastOutcome,
  created_at: iso(s.createdAt) as string,
});

/**
 * PUT /projects/{id}/schedule: runs the project's builder again on a cron schedule, adding only rows
 * whose unique key is new — so the project needs a builder and unique_columns (a 422 says which).
 */
export async function putSchedule(kernel: Kernel, project: Project, spec: CronSpec, keyId?: string) {
  if (!project.builderId) {
    throw validationError('This project has no builder to run again (it was made without one)', [{ path: '', message: 'no builder' }]);
  }
  if (project.settings.uniqueColumns.length === 0) {
    throw validationError(
      'Set the project’s unique_columns first (PUT /projects/{project_id}/settings): a scheduled run adds only rows whose key is new',
      [{ path: '', message: 'the project has no unique_columns' }],
    );
  }
  checkCron(spec, kernel.config.schedules.minIntervalMs);
  const now = Date.now();
  const existing = await kernel.storage.schedules.get(project.pk);
  await kernel.storage.schedules.put({
    projectPk: project.pk,
    cron: spec.cron,
    timezone: spec.timezone,
    nextRunAt: nextRunAfter(spec, now) as number, // checkCron saw it fire
    keyId: keyId ?? null,
    createdAt: existing?.createdAt ?? now,
  });
  return scheduleView((await kernel.storage.schedules.get(project.pk)) as ScheduleRecord);
}

export async function getSchedule(kernel: Kernel, project: Project) {
  const s = await kernel.storage.schedules.get(project.pk);
  if (!s) throw new ServiceError('not_found', 'This project has no schedule (PUT /projects/{project_id}/schedule sets one)');
  return scheduleView(s);
}
