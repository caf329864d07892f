import { Cron } from 'croner';
import { validationError } from '../errors.ts';

/** A checked schedule: its cron pattern and IANA time zone. */
export interface CronSpec {
  cron: string;
  timezone: string;
}

const pattern = (spec: CronSpec) => new Cron(spec.cron, { timezone: spec.timezone, paused: true });

/**
 * Checks a schedule as a user writes it (croner reads the pattern: 5 fields, or 6 with seconds,
 * and nicknames like @daily): a 422 names what is wrong — the pattern, the time zone, a pattern
 * that never fires, or runs closer together than `minIntervalMs`.
 */
export function checkCron(spec: CronSpec, minIntervalMs: number): void {
  try {
    new Intl.DateTimeFormat('en', { timeZone: spec.timezone });
  } catch {
    throw validationError(`Unknown timezone "${spec.timezone}": use an IANA name such as Europe/Paris or UTC`, [
      { path: 'timezone', message: 'is not an IANA time zone' },
    ]);
  }
  let runs: Date[];
  try {
    // Enough runs to cross a day's irregular gaps (`0,59 6,7 * * *` has one of a minute).
    runs = pattern(spec).nextRuns(100);
  } catch (e) {
    throw validationError(`Invalid cron "${spec.cron}": ${(e as Error).message}`, [{ path: 'cron', message: (e as Error).message }]);
  }
  if (runs.length === 0) throw validationError(`The cron "${spec.cron}" never fires`, [{ path: 'cron', message: 'never fires' }]);
  for (let i = 1; i < runs.length; i++) {
    const gap = (runs[i] as Date).getTime() - (runs[i - 1] as Date).getTime();
    if (gap < minIntervalMs) {
      throw validationError(
        `The cron "${spec.cron}" runs every ${Math.round(gap / 1000)} s; schedules run at most every ${Math.round(minIntervalMs / 1000)} s (SCHEDULE_MIN_INTERVAL_S)`,
        [{ path: 'cron', message: 'fires too often' }],
      );
    }
  }
}

/** The first time the schedule fires after `after` (ms), or null when it never will again. */
export function nextRunAfter(spec: CronSpec, after: number): number | null {
  return pattern(spec).nextRun(new Date(after))?.getTime() ?? null;
}
