import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer } from '../../api-shapes.ts';
import { ErrorNote } from '../../error-note.tsx';
import type { Column } from './table-types.ts';
import { RunCells, type RunMode } from './tool-column.tsx';

/** The small forms of a table's panels: a name, a new row, a run on the selected rows; and a file saved from the page. */

/** A name form (a project's or a column's): the service checks it (a name taken is said on the field). */
export function RenameForm(props: { label: string; value: string; save(name: string): Promise<unknown>; onDone(): void }) {
  const [name, setName] = useState(props.value);
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="stack wide"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!name.trim()) return setError('A name cannot be empty.');
        try {
          await props.save(name.trim());
          props.onDone();
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      <label for="rename">{props.label}</label>
      <input id="rename" value={name} aria-invalid={Boolean(error)} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <ErrorNote message={error} />
      <button type="submit" class="primary">
        Save name
      </button>
    </form>
  );
}

/** A new row: one field per input column (POST …/rows). */
export function AddRowForm(props: { projectPath: string; columns: Column[]; onDone(): void }) {
  const inputs = props.columns.filter((c) => c.type === 'input');
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | undefined>();
  return (
    <form
      class="stack wide"
      onSubmit={async (e) => {
        e.preventDefault();
        try {
          const r = await api<Answer<'add_row'>>('POST', `${props.projectPath}/rows`, {
            company: Object.fromEntries(inputs.map((c) => [c.name, values[c.name]?.trim() ? values[c.name] : null])),
          });
          if (r.message !== 'Row created') return setError(`Not added: a row with the same unique key exists already (${r.message}).`);
          props.onDone();
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      {inputs.map((c) => (
        <label key={c.col_id} class="stack">
          {c.name}
          <input value={values[c.name] ?? ''} onInput={(e) => setValues({ ...values, [c.name]: (e.target as HTMLInputElement).value })} />
        </label>
      ))}
      <ErrorNote message={error} />
      <button type="submit" class="primary">
        Add row
      </button>
    </form>
  );
}

/** The selected rows' columns run: which tool column, which of its cells. */
export function RunSelected(props: { projectPath: string; columns: Column[]; rowIds: string[] }) {
  const tools = props.columns.filter((c) => c.type === 'tool');
  const [colId, setColId] = useState(tools[0]?.col_id ?? '');
  const [mode, setMode] = useState<RunMode>('all');
  const column = tools.find((c) => c.col_id === colId);
  if (!tools.length) return <p>This table has no tool column yet: add one with + Column.</p>;
  return (
    <div class="stack wide">
      <label for="run-selected-column">Column</label>
      <select id="run-selected-column" value={colId} onChange={(e) => setColId((e.target as HTMLSelectElement).value)}>
        {tools.map((c) => (
          <option key={c.col_id} value={c.col_id}>
            {c.name}
          </option>
        ))}
      </select>
      <label for="run-selected-mode">Which cells</label>
      <select id="run-selected-mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as RunMode)}>
        <option value="all">All of them (cached results cost nothing)</option>
        <option value="pending">Only those never run</option>
        <option value="failed">Only those that failed</option>
        <option value="empty">Only those without a value</option>
      </select>
      {column && <RunCells key={`${colId}:${mode}`} projectPath={props.projectPath} column={column} mode={mode} rowIds={props.rowIds} />}
    </div>
  );
}

/** A file the browser saves, made here (the selected rows, as they are shown). */
export function download(name: string, body: string) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([body], { type: 'text/csv;charset=utf-8' }));
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
