import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { nextRunAfter } from './cron.ts';
import { startScheduledRun } from './scheduled-run.ts';

/** Far past any date: a schedule that will never fire again. */
const NEVER = 8_640_000_000_000_000;

/**
 * Takes the schedules due now and starts their runs. Due times missed while no process ran (a
 * restart, an outage) make one run, not one per missed time: the next due time is the first
 * after now. Answers how many due times it took.
 */
async function runDueSchedules(kernel: Kernel, now = Date.now()): Promise<number> {
  let taken = 0;
  for (const schedule of await kernel.storage.schedules.due(now, 20)) {
    const project = await kernel.storage.projects.getByPk(schedule.projectPk);
    if (!project) {
      await kernel.storage.schedules.remove(schedule.projectPk); // the project was deleted
      continue;
    }
    const next = nextRunAfter(schedule, now) ?? NEVER;
    if (!(await kernel.storage.schedules.take(schedule.projectPk, schedule.nextRunAt, next))) continue; // another process took it
    taken++;
    let outcome: string;
    try {
      outcome = await startScheduledRun(kernel, project, schedule, schedule.nextRunAt);
    } catch (e) {
      outcome = `failed to start: ${(e as Error).message}`;
      log.warn('a scheduled run could not start', { project_id: project.id, error: (e as Error).message });
    }
    await kernel.storage.schedules.recordOutcome(schedule.projectPk, now, outcome);
    log.info('schedule due', { project_id: project.id, outcome, next_run_at: new Date(next).toISOString() });
  }
  return taken;
}

/** Looks for due schedules every SCHEDULE_POLL_MS, in every process that runs jobs. */
export function startScheduler(kernel: Kernel): () => void {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      await runDueSchedules(kernel);
    } catch (e) {
      log.warn('schedules could not be read', { error: (e as Error).message });
    } finally {
      busy = false;
    }
  }, kernel.config.schedules.pollMs);
  timer.unref();
  return () => clearInterval(timer);
}
