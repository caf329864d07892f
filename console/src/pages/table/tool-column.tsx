import { ErrorNote } from '../../error-note.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../../api.ts';
import type { Answer, Body, Schema } from '../../api-shapes.ts';
import { type JsonSchema, pruned, SchemaFields } from '../schema-form.tsx';

/** A tool of the catalog (GET /tools); its config_schema is the JSON Schema its form is drawn from. */
type Tool = Omit<Schema<'Tool'>, 'config_schema'> & { config_schema: JsonSchema };
type Step = Schema<'WaterfallStep'>;
/** A column as these forms read it: a tool column's fields are absent on an input column. */
export type TableColumn = Pick<Schema<'Column'>, 'col_id' | 'name' | 'type'> &
  Partial<Omit<Schema<'ToolColumn'>, 'col_id' | 'name' | 'type' | 'required'>>;

/** The tool catalog (GET /tools), read once per page load. */
let catalog: Promise<Tool[]> | undefined;
export const toolCatalog = () => {
  catalog ??= api<Tool[]>('GET', '/tools').catch((e) => {
    catalog = undefined;
    throw e;
  });
  return catalog;
};

function ToolPicker(props: { tools: Tool[]; value: string; label: string; onChange(id: string): void }) {
  const categories = [...new Set(props.tools.map((t) => t.category))].sort();
  return (
    <select aria-label={props.label} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
      <option value="">Choose a tool…</option>
      {categories.map((c) => (
        <optgroup key={c} label={c}>
          {props.tools
            .filter((t) => t.category === c)
            .map((t) => (
              <option key={t.tool_id} value={t.tool_id}>
                {t.name} ({t.cost.credits} credit{t.cost.credits === 1 ? '' : 's'} per {t.cost.per})
              </option>
            ))}
        </optgroup>
      ))}
    </select>
  );
}

/** One tool of a column (a step of a waterfall): picked from the catalog, its config drawn from its schema. */
function StepFields(props: {
  index: number;
  step: Step;
  steps: number;
  tools: Tool[];
  editing: boolean;
  fixed: boolean;
  errors: Record<string, string>;
  onChange(s: Step): void;
  onRemove(): void;
}) {
  const { index: i, step: s, errors } = props;
  const tool = props.tools.find((t) => t.tool_id === s.tool_id);
  return (
    <fieldset class="group">
      <legend>{i === 0 ? 'Tool' : `Then, when no result: step ${i + 1}`}</legend>
      {props.editing ? (
        <p>{tool?.name ?? s.tool_id}</p>
      ) : (
        <ToolPicker
          tools={props.tools}
          value={s.tool_id}
          label={i === 0 ? 'Tool' : `Tool of step ${i + 1}`}
          onChange={(id) => props.onChange({ tool_id: id, config: {} })}
        />
      )}
      {i === 0 && errors.tool_id && <span class="field-error">{errors.tool_id}</span>}
      {tool && <small class="hint">{tool.summary}</small>}
      {tool && !props.fixed && (
        <SchemaFields
          schema={tool.config_schema}
          path={props.steps > 1 ? `waterfall[${i}].config` : 'config'}
          value={s.config}
          errors={errors}
          onChange={(config) => props.onChange({ ...s, config })}
        />
      )}
      {i > 0 && !props.editing && (
        <button type="button" class="link" onClick={props.onRemove}>
          Remove step {i + 1}
        </button>
      )}
    </fieldset>
  );
}

/**
 * Adds a tool column from the catalog — its config form (from the tool's schema), a run condition,
 * auto-run, waterfall steps — or, given `column`, edits one (its config, run condition and auto-run).
 */
export function ToolColumnForm(props: { projectPath: string; column?: TableColumn; onDone(name: string): void }) {
  const editing = props.column;
  const [tools, setTools] = useState<Tool[]>([]);
  const [steps, setSteps] = useState<Step[]>(
    editing?.waterfall?.length
      ? editing.waterfall
      : [{ tool_id: editing?.tool_id ?? '', config: (editing?.config as Record<string, unknown> | undefined) ?? {} }],
  );
  const [name, setName] = useState(editing?.name ?? '');
  const [condition, setCondition] = useState(editing?.run_condition ?? '');
  const [autoRun, setAutoRun] = useState(editing?.auto_run ?? false);
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  useEffect(() => {
    toolCatalog()
      .then(setTools)
      .catch((e: ApiError) => setError(e.message));
  }, []);
  // A waterfall's steps are set when it is made; editing changes its name, condition and auto-run.
  const fixedSteps = Boolean(editing?.waterfall?.length);
  const toolOf = (id: string) => tools.find((t) => t.tool_id === id);
  const setStep = (i: number, s: Step) => setSteps(steps.map((x, k) => (k === i ? s : x)));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setFields({});
    const chosen = steps.filter((s) => s.tool_id);
    const clean = chosen.map((s) => ({
      tool_id: s.tool_id,
      config: pruned(s.config, toolOf(s.tool_id)?.config_schema ?? {}) as Record<string, unknown>,
    }));
    if (!chosen.length) {
      setFields({ tool_id: 'Choose the tool that fills this column.' });
      return;
    }
    try {
      if (editing) {
        await api('PATCH', `${props.projectPath}/columns/${encodeURIComponent(editing.col_id)}`, {
          ...(name.trim() !== editing.name ? { name: name.trim() } : {}),
          ...(fixedSteps ? {} : { config: clean[0]?.config }),
          auto_run: autoRun,
          run_condition: condition.trim() || null,
        });
      } else {
        await api('POST', `${props.projectPath}/columns`, {
          name: name.trim(),
          ...(clean.length > 1 ? { waterfall: clean } : { tool_id: clean[0]?.tool_id, config: clean[0]?.config }),
          auto_run: autoRun,
          ...(condition.trim() ? { run_condition: condition.trim() } : {}),
        });
      }
      props.onDone(name.trim());
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setFields(err.fields);
    }
  };
  return (
    <form class="stack wide" onSubmit={submit} noValidate>
      <label for="tool-column-name">Column name *</label>
      <input
        id="tool-column-name"
        required
        value={name}
        onInput={(e) => setName((e.target as HTMLInputElement).value)}
        aria-invalid={Boolean(fields.name)}
      />
      {fields.name && <span class="field-error">{fields.name}</span>}
      {steps.map((s, i) => (
        <StepFields
          key={i}
          index={i}
          step={s}
          steps={steps.length}
          tools={tools}
          editing={Boolean(editing)}
          fixed={fixedSteps}
          errors={fields}
          onChange={(x) => setStep(i, x)}
          onRemove={() => setSteps(steps.filter((_, k) => k !== i))}
        />
      ))}
      {!editing && (
        <button type="button" onClick={() => setSteps([...steps, { tool_id: '', config: {} }])}>
          Add a fallback tool (waterfall)
        </button>
      )}
      <label for="tool-column-condition">Run only when (a condition on the row's columns; empty: every row)</label>
      <input
        id="tool-column-condition"
        placeholder="Website != null"
        value={condition}
        onInput={(e) => setCondition((e.target as HTMLInputElement).value)}
        aria-invalid={Boolean(fields.run_condition)}
      />
      {fields.run_condition && <span class="field-error">{fields.run_condition}</span>}
      <label>
        <input type="checkbox" checked={autoRun} onChange={(e) => setAutoRun((e.target as HTMLInputElement).checked)} /> Run on rows added
        later (auto-run)
      </label>
      <ErrorNote message={error} />
      <button type="submit" class="primary">
        {editing ? 'Save column' : 'Add column'}
      </button>
    </form>
  );
}

/** What POST …/columns/estimate answers: what a run of the same selection would queue and cost (nothing runs). */
type Estimate = Answer<'estimate_columns'>;

/** A number of credits as people read it (expected figures are fractional: one decimal is enough). */
const creditText = (n: number) => n.toLocaleString(undefined, { maximumFractionDigits: 1 });
const cellsText = (n: number) => `${n.toLocaleString()} ${n === 1 ? 'cell' : 'cells'}`;
const CAP_RULE = '“Stop after” takes a whole number of credits above 0, or nothing for no cap.';

/** Which cells a run takes (the `mode` of POST …/columns/run), as the column menu names them. */
export type RunMode = NonNullable<Body<'run_pending_columns'>['mode']>;
export const RUN_MODES: { mode: RunMode; label: string }[] = [
  { mode: 'pending', label: 'Run pending cells' },
  { mode: 'failed', label: 'Re-run failed cells' },
  { mode: 'empty', label: 'Re-run empty cells' },
  { mode: 'all', label: 'Re-run all cells' },
];

/**
 * Runs cells of a tool column (those `mode` names, in every row or only `rowIds`), after showing what
 * the service estimates the run would cost (POST …/columns/estimate: run conditions, required inputs
 * and the workspace's cache applied) against the balance; an optional cap (`max_credits`) stops the
 * run's charges there.
 */
export function RunCells(props: { projectPath: string; column: TableColumn; mode: RunMode; rowIds?: string[] }) {
  const [estimate, setEstimate] = useState<Estimate | undefined>();
  const [cap, setCap] = useState('');
  const [capError, setCapError] = useState<string | undefined>();
  const capInput = useRef<HTMLInputElement>(null);
  const [message, setMessage] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const selection = {
    col_ids: [props.column.col_id],
    mode: props.mode,
    ...(props.rowIds ? { row_ids: props.rowIds } : {}),
  };
  useEffect(() => {
    let current = true;
    api<Estimate>('POST', `${props.projectPath}/columns/estimate`, selection)
      .then((e) => current && setEstimate(e))
      .catch((e: ApiError) => current && setError(e.message));
    return () => {
      current = false;
    };
  }, [props.column.col_id, props.mode, props.rowIds?.join(',')]);
  const run = async () => {
    setError(undefined);
    setCapError(undefined);
    setMessage(undefined);
    // Empty: no cap. Anything else goes as typed, for the service to judge (0 or 1.5 come back as its 422);
    // text the browser cannot read as a number would otherwise read as empty, so it is refused here.
    if (capInput.current?.validity.badInput) return setCapError(`Not run: ${CAP_RULE}`);
    const maxCredits = cap.trim() === '' ? undefined : Number(cap);
    try {
      const r = await api<{ queued: number; max_credits?: number }>('POST', `${props.projectPath}/columns/run`, {
        ...selection,
        ...(maxCredits === undefined ? {} : { max_credits: maxCredits }),
      });
      setEstimate(undefined);
      setMessage(
        `${cellsText(r.queued)} queued${
          r.max_credits
            ? `; the run stops charging at ${creditText(r.max_credits)} ${r.max_credits === 1 ? 'credit' : 'credits'} and leaves the cells past it pending`
            : ''
        }. The column fills in the table as they finish.`,
      );
    } catch (e) {
      // A cap the service refuses (422 on max_credits): said next to the field; nothing was queued.
      const refused = e instanceof ApiError && e.status === 422 ? e.fields.max_credits : undefined;
      if (refused) setCapError(`Not run: ${CAP_RULE} (The service says: ${refused}.)`);
      else setError((e as Error).message);
    }
  };
  return (
    <div class="stack wide">
      <p>
        Column <strong>{props.column.name}</strong>
        {props.rowIds && ` · ${props.rowIds.length.toLocaleString()} selected ${props.rowIds.length === 1 ? 'row' : 'rows'}`}
      </p>
      {!estimate && !error && !message && <p class="meta">Counting the cells and their cost…</p>}
      {estimate && (
        <p data-testid="estimate">
          {cellsText(estimate.cells)} to run; expected about {creditText(estimate.credits_expected)} credits, at most{' '}
          {creditText(estimate.credits_max)}; balance {creditText(estimate.balance)} → about {creditText(estimate.balance_after)} after.
        </p>
      )}
      {estimate && estimate.credits_max > estimate.balance && (
        <p class="warning" data-testid="estimate-warning">
          The balance may not cover every cell (at most {creditText(estimate.credits_max)} credits, balance {creditText(estimate.balance)}
          ): cells it cannot pay for stop as “insufficient credits” and can run later.
        </p>
      )}
      {estimate && estimate.cells > 0 && (
        <>
          <label for="run-max-credits">Stop after this many credits (optional)</label>
          <input
            id="run-max-credits"
            ref={capInput}
            type="number"
            min={1}
            step={1}
            inputMode="numeric"
            placeholder="No cap"
            value={cap}
            onInput={(e) => {
              setCap((e.target as HTMLInputElement).value);
              setCapError(undefined);
            }}
            aria-invalid={Boolean(capError)}
            aria-describedby={capError ? 'run-max-credits-hint run-max-credits-error' : 'run-max-credits-hint'}
          />
          <div id="run-max-credits-error">
            <ErrorNote message={capError} />
          </div>
          <p id="run-max-credits-hint" class="hint">
            The run stops charging once it has spent this many credits; the cells left stay pending for a later run. Empty: no cap.
          </p>
        </>
      )}
      <ErrorNote message={error} />
      {message && <p role="status">{message}</p>}
      {estimate && (
        <button type="button" class="primary" disabled={estimate.cells === 0} onClick={run}>
          {estimate.cells === 0 ? 'No cells to run' : `Run ${estimate.cells.toLocaleString()} ${estimate.cells === 1 ? 'cell' : 'cells'}`}
        </button>
      )}
    </div>
  );
}
