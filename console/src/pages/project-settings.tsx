import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { CopyButton } from '../copy-button.tsx';
import { ErrorNote } from '../error-note.tsx';
import { CheckboxGroup } from '../checkbox-group.tsx';
import { TextField } from '../text-field.tsx';

interface Settings {
  unique_columns: string[];
  on_conflict: 'skip' | 'update';
}
interface Project {
  id: string;
  name: string;
  builder_id: string | null;
  columns: { col_id: string; name: string; type: 'input' | 'tool' }[];
  settings: Settings;
}
interface Schedule {
  cron: string;
  timezone: string;
  next_run_at: string;
  last_run_at: string | null;
  last_outcome: string | null;
  created_at: string;
}
/** What a 409 of PUT …/settings holds: rows that already repeat the new key. */
interface Duplicates {
  duplicates: number;
  examples: { row_ids: string[]; values: Record<string, string> }[];
}

/** Columns one unique key may combine (the service's limit). */
const MAX_UNIQUE_COLUMNS = 5;

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

/**
 * The unique key: which input columns identify a row, and what an insert of an existing key does.
 * Rows that already repeat the key are the service's 409: how many, and examples of them, are shown.
 */
function UniqueKey({ project, path, onSaved }: { project: Project; path: string; onSaved(s: Settings): void }) {
  const inputs = project.columns.filter((c) => c.type === 'input');
  const [chosen, setChosen] = useState<string[]>(project.settings.unique_columns);
  const [onConflict, setOnConflict] = useState(project.settings.on_conflict);
  const [error, setError] = useState<string | undefined>();
  const [duplicates, setDuplicates] = useState<Duplicates | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const toggle = (name: string, on: boolean) => {
    setSaved(undefined);
    // In the order of the table's columns, as people read them.
    setChosen(inputs.map((c) => c.name).filter((n) => (n === name ? on : chosen.includes(n))));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setDuplicates(undefined);
    setSaved(undefined);
    try {
      const s = await api<Settings>('PUT', `${path}/settings`, { unique_columns: chosen, on_conflict: onConflict });
      onSaved(s);
      setSaved(
        s.unique_columns.length
          ? `Saved: rows are identified by ${s.unique_columns.join(' + ')}; a row whose key exists is ${s.on_conflict === 'skip' ? 'skipped' : 'used to fill the empty cells of the existing row'}.`
          : 'Saved: the project has no unique key; every row coming in is added.',
      );
    } catch (err) {
      const detail = err instanceof ApiError && err.status === 409 ? (err.detail as Duplicates | undefined) : undefined;
      if (detail && typeof detail.duplicates === 'number') setDuplicates(detail);
      else setError((err as Error).message);
    }
  };
  return (
    <section aria-labelledby="unique-title">
      <h2 id="unique-title">Unique key</h2>
      <p>
        Rows whose values in these columns are the same are one row: adding rows, builder runs, scheduled runs and the inbound URL bring a
        key in once. Values are compared as people mean them: case and blanks do not count, <code>ACME.com</code> and{' '}
        <code>https://www.acme.com/</code> are one web address, emails are compared lower-cased.
      </p>
      {inputs.length === 0 ? (
        <p>This project has no input column to make a key of.</p>
      ) : (
        <form class="stack wide" onSubmit={save} noValidate>
          <CheckboxGroup
            legend="Unique columns"
            name="unique_columns"
            options={inputs.map((c) => ({
              value: c.name,
              label: c.name,
              disabled: !chosen.includes(c.name) && chosen.length >= MAX_UNIQUE_COLUMNS,
            }))}
            checked={chosen}
            onToggle={toggle}
            describedBy="unique-hint"
          >
            <small id="unique-hint" class="hint">
              Input columns only, up to {MAX_UNIQUE_COLUMNS}. None: rows are never compared. A row whose key columns are all empty is always
              added.
            </small>
          </CheckboxGroup>
          <fieldset class="group">
            <legend>A row whose key exists already</legend>
            <label class="choice">
              <input type="radio" name="on_conflict" value="skip" checked={onConflict === 'skip'} onChange={() => setOnConflict('skip')} />{' '}
              Skip it: the existing row stays as it is
            </label>
            <label class="choice">
              <input
                type="radio"
                name="on_conflict"
                value="update"
                checked={onConflict === 'update'}
                onChange={() => setOnConflict('update')}
              />{' '}
              Fill the existing row's empty cells from it (cells with a value stay)
            </label>
          </fieldset>
          <ErrorNote message={error} />
          {duplicates && (
            <div class="error" role="alert" data-testid="duplicates">
              <p>
                {duplicates.duplicates.toLocaleString()} {duplicates.duplicates === 1 ? 'row repeats' : 'rows repeat'} the key of an earlier
                row, so the key was not set and nothing changed. Delete or change {duplicates.duplicates === 1 ? 'it' : 'them'}, then save
                again.
              </p>
              <ul>
                {duplicates.examples.map((x) => (
                  <li key={x.row_ids.join()}>
                    Rows {x.row_ids.join(' and ')}:{' '}
                    {Object.entries(x.values)
                      .map(([k, v]) => `${k} “${v}”`)
                      .join(', ')}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {saved && <p role="status">{saved}</p>}
          <button type="submit" class="primary">
            Save unique key
          </button>
        </form>
      )}
    </section>
  );
}

/** The builder's schedule: presets or a cron pattern, a time zone; next run, last run and its outcome; Stop. */
function ScheduleSection({ project, path }: { project: Project; path: string }) {
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
  const preset = PRESETS.some((p) => p.cron === cron) ? cron : '';
  const zoneList = zones();
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
          {schedule && (
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
                {schedule.last_run_at ? (
                  <time dateTime={schedule.last_run_at}>{inZone(schedule.last_run_at, schedule.timezone)}</time>
                ) : (
                  'Not yet'
                )}
              </dd>
              <dt>Last outcome</dt>
              <dd data-testid="last-outcome">{schedule.last_outcome ?? '—'}</dd>
            </dl>
          )}
          <form class="stack wide" onSubmit={save} noValidate>
            <label for="schedule-preset">When</label>
            <select
              id="schedule-preset"
              value={preset}
              onChange={(e) => {
                const v = (e.target as HTMLSelectElement).value;
                if (v) setCron(v);
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
                  Minute, hour, day of month, month, day of week: <code>30 6 * * 1-5</code> is 6:30 on weekdays; <code>@daily</code> is
                  midnight. Runs are at least 5 minutes apart.
                </>
              }
              value={cron}
              spellcheck={false}
              autoComplete="off"
              onInput={(e) => setCron((e.target as HTMLInputElement).value)}
            />
            <label for="schedule-timezone">Time zone</label>
            <input
              id="schedule-timezone"
              value={timezone}
              list="schedule-zones"
              autoComplete="off"
              onInput={(e) => setTimezone((e.target as HTMLInputElement).value)}
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
                <button type="button" class="danger" onClick={stop}>
                  Stop schedule
                </button>
              )}
            </div>
          </form>
        </>
      )}
    </section>
  );
}

/** The inbound URL: made (shown once, replacing any earlier one) or turned off. The service keeps only its hash. */
function InboundSection({ path, columns }: { path: string; columns: string[] }) {
  const [made, setMade] = useState<{ url: string; created_at: string } | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const act = async (run: () => Promise<void>) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await run();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const make = () => act(async () => setMade(await api('POST', `${path}/inbound`)));
  const turnOff = () =>
    act(async () => {
      const r = await api<{ deleted: boolean }>('DELETE', `${path}/inbound`);
      setMade(undefined);
      setNotice(r.deleted ? 'The inbound URL is off: it answers 404 from now on.' : 'This project had no inbound URL.');
    });
  const example = made
    ? `curl -X POST '${made.url}' -H 'content-type: application/json' \\\n  -d '${JSON.stringify([Object.fromEntries(columns.map((c) => [c, '…']))])}'`
    : '';
  return (
    <section aria-labelledby="inbound-title">
      <h2 id="inbound-title">Inbound URL</h2>
      <p>
        Other systems (a form, Zapier, a script) add rows by POSTing JSON to this URL, with no API key: one object of column names and
        values, or an array of up to 1,000. The unique key applies, and auto-run columns start. The URL is the secret: it is shown once, and
        making a new one turns the old one off.
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={make}>
          Make an inbound URL
        </button>
        <button type="button" class="danger" onClick={turnOff}>
          Turn the inbound URL off
        </button>
      </div>
      <ErrorNote message={error} />
      {notice && (
        <p class="new-key" role="status">
          {notice}
        </p>
      )}
      {made && (
        <div class="new-key" role="status">
          <p>Inbound URL — copy it now, it will not be shown again:</p>
          <code data-testid="inbound-url">{made.url}</code> <CopyButton text={made.url} label="Copy URL" />
          <pre>{example}</pre>
        </div>
      )}
    </section>
  );
}

/** `/projects/{id}/settings`: the project's unique key, its builder's schedule and its inbound URL. */
export function ProjectSettingsPage({ id }: { id: string }) {
  const [project, setProject] = useState<Project | undefined>();
  const [error, setError] = useState<string | undefined>();
  const path = `/projects/${encodeURIComponent(id)}`;
  useEffect(() => {
    setProject(undefined);
    api<Project>('GET', path)
      .then(setProject)
      .catch((e: ApiError) => setError(e.status === 404 ? 'This project does not exist in this workspace.' : e.message));
  }, [id]);
  return (
    <main class="page">
      <p>
        <a href={path}>← Back to the table</a>
      </p>
      <h1>{project ? `${project.name} · Settings` : 'Project settings'}</h1>
      <ErrorNote message={error} />
      {project && (
        <>
          <UniqueKey key={project.id} project={project} path={path} onSaved={(settings) => setProject({ ...project, settings })} />
          <ScheduleSection key={`schedule-${project.id}`} project={project} path={path} />
          <InboundSection
            key={`inbound-${project.id}`}
            path={path}
            columns={project.columns.filter((c) => c.type === 'input').map((c) => c.name)}
          />
        </>
      )}
    </main>
  );
}
