import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { CheckboxGroup } from '../checkbox-group.tsx';
import { ErrorNote } from '../error-note.tsx';
import type { Duplicates, Project, Settings } from './project-settings-types.ts';

/** Columns one unique key may combine (the service's limit). */
const MAX_UNIQUE_COLUMNS = 5;

/**
 * The unique key: which input columns identify a row, and what an insert of an existing key does.
 * Rows that already repeat the key are the service's 409: how many, and examples of them, are shown.
 */
export function UniqueKey({ project, path, onSaved }: { project: Project; path: string; onSaved(s: Settings): void }) {
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
