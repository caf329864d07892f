import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ErrorNote } from '../error-note.tsx';
import { TextField } from '../text-field.tsx';
import type { Project, Schedule } from './project-settings-types.ts';

/** The schedules people ask for most; anything else is a cron pattern typed in. */
const PRESETS = [
  { cron: '0 7 * * *', label: 'Every day at 7:00' },
  { cron: '0 7 * * 1-5', label: 'Weekdays at 7:00' },
  { cron: '0 7 * * 1', label: 'Every Monday at 7:00' },
  { cron: '0 7 1 * *', label: 'The first of every month at 7:00' },
];
const presetOf = (cron: string) => PRESETS.find((p) => p.cron === cron)?.label;

/** A time as the schedule's own time zone reads it (the zone named after it). */
const inZone = (iso: string, timeZone: string) => {
  try {
    return `${new Date(iso).toLocaleString(undefined, { timeZone, dateStyle: 'medium', timeStyle: 'short' })} (${timeZone})`;
  } catch {
    return new Date(iso).toLocaleString();
  }
};
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const zones = (): string[] => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return [];
  }
};

/** The builder's schedule: presets or a cron pattern, a time zone; next run, last run and its outcome; Stop. */
export function ScheduleSection({ project, path }: { project: Project; path: string }) {
  const [schedule, setSchedule] = useState<Schedule | null | undefined>();
  const [cron, setCron] = useState(PRESETS[1]?.cron ?? '');
  const [timezone, setTimezone] = useState(browserZone());
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState<string | undefined>();
  const show = (s: Schedule | null) => {
    setSchedule(s);
    if (s) {
      setCron(s.cron);
      setTimezone(s.timezone);
    }
  };
  useEffect(() => {
    api<Schedule>('GET', `${path}/schedule`)
      .then(show)
      .catch((e: ApiError) => (e.status === 404 ? show(null) : setError(e.message)));
  }, [path]);
  const act = async (run: () => Promise<void>) => {
    setError(undefined);
    setFields({});
    setNotice(undefined);
    try {
      await run();
    } catch (e) {
      setError((e as Error).message);
      if (e instanceof ApiError) setFields(e.fields);
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    return act(async () => {
      show(await api<Schedule>('PUT', `${path}/schedule`, { cron: cron.trim(), timezone: timezone.trim() }));
      setNotice('Schedule saved.');
    });
  };
  const stop = () =>
    act(async () => {
      await api('DELETE', `${path}/schedule`);
      show(null);
      setNotice('Schedule stopped: the builder no longer runs on its own (a run under way goes on).');
    });
  return (
    <section aria-labelledby="schedule-title">
      <h2 id="schedule-title">Schedule</h2>
      {!project.builder_id ? (
        <p>This project was not made by a builder: there is nothing to run again on a schedule.</p>
      ) : (
        <>
          <p>
            The builder runs again at these times and adds only the rows whose unique key is new (it pays only for those). Runs never
            overlap: a due time while a run is still going is skipped.
            {project.settings.unique_columns.length === 0 && ' The project needs a unique key first (above).'}
          </p>
          {schedule === null && <p data-testid="schedule-state">No schedule: the builder runs only when asked.</p>}
          {schedule && <ScheduleState schedule={schedule} />}
          <ScheduleForm
            schedule={schedule}
            cron={cron}
            timezone={timezone}
            fields={fields}
            error={error}
            notice={notice}
            onCron={setCron}
            onTimezone={setTimezone}
            onSave={save}
            onStop={stop}
          />
        </>
      )}
    </section>
  );
}

/** What the schedule is: when it runs, the next run, the last run and its outcome. */
function ScheduleState({ schedule }: { schedule: Schedule }) {
  return (
    <dl class="detail" data-testid="schedule-state">
      <dt>Runs</dt>
      <dd>
        {presetOf(schedule.cron) ? (
          <>
            {presetOf(schedule.cron)} (<code>{schedule.cron}</code>)
          </>
        ) : (
          <code>{schedule.cron}</code>
        )}
        , {schedule.timezone} time
      </dd>
      <dt>Next run</dt>
      <dd>
        <time data-testid="next-run" dateTime={schedule.next_run_at}>
          {inZone(schedule.next_run_at, schedule.timezone)}
        </time>
      </dd>
      <dt>Last run</dt>
      <dd>
        {schedule.last_run_at ? <time dateTime={schedule.last_run_at}>{inZone(schedule.last_run_at, schedule.timezone)}</time> : 'Not yet'}
      </dd>
      <dt>Last outcome</dt>
      <dd data-testid="last-outcome">{schedule.last_outcome ?? '—'}</dd>
    </dl>
  );
}

interface ScheduleFormProps {
  schedule: Schedule | null | undefined;
  cron: string;
  timezone: string;
  fields: Record<string, string>;
  error: string | undefined;
  notice: string | undefined;
  onCron(cron: string): void;
  onTimezone(zone: string): void;
  onSave(e: Event): void;
  onStop(): void;
}

/** The schedule's form: a preset or a cron pattern, a time zone; Start/Save, and Stop when one runs. */
function ScheduleForm({ schedule, cron, timezone, fields, error, notice, onCron, onTimezone, onSave, onStop }: ScheduleFormProps) {
  const preset = PRESETS.some((p) => p.cron === cron) ? cron : '';
  const zoneList = zones();
  return (
    <form class="stack wide" onSubmit={onSave} noValidate>
      <label for="schedule-preset">When</label>
      <select
        id="schedule-preset"
        value={preset}
        onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value;
          if (v) onCron(v);
        }}
      >
        {PRESETS.map((p) => (
          <option key={p.cron} value={p.cron}>
            {p.label}
          </option>
        ))}
        <option value="">Other (cron pattern below)</option>
      </select>
      <TextField
        id="schedule-cron"
        label="Cron pattern"
        error={fields.cron}
        hint={
          <>
            Minute, hour, day of month, month, day of week: <code>30 6 * * 1-5</code> is 6:30 on weekdays; <code>@daily</code> is midnight.
            Runs are at least 5 minutes apart.
          </>
        }
        value={cron}
        spellcheck={false}
        autoComplete="off"
        onInput={(e) => onCron((e.target as HTMLInputElement).value)}
      />
      <label for="schedule-timezone">Time zone</label>
      <input
        id="schedule-timezone"
        value={timezone}
        list="schedule-zones"
        autoComplete="off"
        onInput={(e) => onTimezone((e.target as HTMLInputElement).value)}
        aria-invalid={Boolean(fields.timezone)}
        aria-describedby={fields.timezone ? 'schedule-timezone-error' : undefined}
      />
      <datalist id="schedule-zones">
        {zoneList.map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      {fields.timezone && (
        <span id="schedule-timezone-error" class="field-error">
          {fields.timezone}
        </span>
      )}
      <ErrorNote message={error} />
      {notice && <p role="status">{notice}</p>}
      <div class="actions">
        <button type="submit" class="primary">
          {schedule ? 'Save schedule' : 'Start schedule'}
        </button>
        {schedule && (
          <button type="button" class="danger" onClick={onStop}>
            Stop schedule
          </button>
        )}
      </div>
    </form>
  );
}
