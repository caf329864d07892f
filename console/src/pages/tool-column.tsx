import { ErrorNote } from '../error-note.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { type JsonSchema, pruned, SchemaFields } from './schema-form.tsx';

interface Tool {
  tool_id: string;
  name: string;
  description: string;
  category: string;
  cost: { credits: number; per: string };
  config_schema: JsonSchema;
}
interface Step {
  tool_id: string;
  config: Record<string, unknown>;
}
export interface TableColumn {
  col_id: string;
  name: string;
  type: 'input' | 'tool';
  tool_id?: string | null;
}

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

/** Adds a tool column from the catalog: its config form (from the tool's schema), a run condition, auto-run, waterfall steps. */
export function AddToolColumn(props: { projectPath: string; onAdded(): void }) {
  const [tools, setTools] = useState<Tool[]>([]);
  const [steps, setSteps] = useState<Step[]>([{ tool_id: '', config: {} }]);
  const [name, setName] = useState('');
  const [condition, setCondition] = useState('');
  const [autoRun, setAutoRun] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [fields, setFields] = useState<Record<string, string>>({});
  useEffect(() => {
    api<Tool[]>('GET', '/tools')
      .then(setTools)
      .catch((e: ApiError) => setError(e.message));
  }, []);
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
    const body = {
      name: name.trim(),
      ...(clean.length > 1 ? { waterfall: clean } : { tool_id: clean[0]?.tool_id, config: clean[0]?.config }),
      auto_run: autoRun,
      ...(condition.trim() ? { run_condition: condition.trim() } : {}),
    };
    try {
      await api('POST', `${props.projectPath}/columns`, body);
      setName('');
      setSteps([{ tool_id: '', config: {} }]);
      setCondition('');
      setAutoRun(false);
      props.onAdded();
    } catch (err) {
      setError((err as Error).message);
      if (err instanceof ApiError) setFields(err.fields);
    }
  };
  return (
    <details class="query">
      <summary>Add a tool column</summary>
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
        {steps.map((s, i) => {
          const tool = toolOf(s.tool_id);
          return (
            <fieldset class="group" key={i}>
              <legend>{i === 0 ? 'Tool' : `Then, when no result: step ${i + 1}`}</legend>
              <ToolPicker
                tools={tools}
                value={s.tool_id}
                label={i === 0 ? 'Tool' : `Tool of step ${i + 1}`}
                onChange={(id) => setStep(i, { tool_id: id, config: {} })}
              />
              {tool && <small class="hint">{tool.description}</small>}
              {tool && (
                <SchemaFields
                  schema={tool.config_schema}
                  path={steps.length > 1 ? `waterfall[${i}].config` : 'config'}
                  value={s.config}
                  errors={fields}
                  onChange={(config) => setStep(i, { ...s, config })}
                />
              )}
              {i > 0 && (
                <button type="button" class="link" onClick={() => setSteps(steps.filter((_, k) => k !== i))}>
                  Remove step {i + 1}
                </button>
              )}
            </fieldset>
          );
        })}
        <button type="button" onClick={() => setSteps([...steps, { tool_id: '', config: {} }])}>
          Add a fallback tool (waterfall)
        </button>
        <label for="tool-column-condition">Run condition (JSONata over the row; empty: every row)</label>
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
          Add column
        </button>
      </form>
    </details>
  );
}

/** What POST …/columns/estimate answers: what a run of the same selection would queue and cost (nothing runs). */
interface Estimate {
  cells: number;
  credits_max: number;
  credits_expected: number;
  balance: number;
  balance_after: number;
}

/** A number of credits as people read it (expected figures are fractional: one decimal is enough). */
const creditText = (n: number) => n.toLocaleString(undefined, { maximumFractionDigits: 1 });
const cellsText = (n: number) => `${n.toLocaleString()} ${n === 1 ? 'cell' : 'cells'}`;
const CAP_RULE = '“Stop after” takes a whole number of credits above 0, or nothing for no cap.';

/**
 * Runs a tool column's pending cells, after showing what the service estimates the run would cost
 * (POST …/columns/estimate: run conditions, required inputs and the workspace's cache applied)
 * against the balance; an optional cap (`max_credits`) stops the run's charges there.
 */
export function RunColumn(props: { projectPath: string; columns: TableColumn[] }) {
  const toolColumns = props.columns.filter((c) => c.type === 'tool');
  const [colId, setColId] = useState('');
  const [estimate, setEstimate] = useState<Estimate | undefined>();
  const [cap, setCap] = useState('');
  const [capError, setCapError] = useState<string | undefined>();
  const capInput = useRef<HTMLInputElement>(null);
  const [message, setMessage] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    setEstimate(undefined);
    setMessage(undefined);
    setError(undefined);
    if (!toolColumns.some((c) => c.col_id === colId)) return;
    let current = true;
    api<Estimate>('POST', `${props.projectPath}/columns/estimate`, { col_ids: [colId] })
      .then((e) => current && setEstimate(e))
      .catch((e: ApiError) => current && setError(e.message));
    return () => {
      current = false;
    };
  }, [colId]);
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
        col_ids: [colId],
        ...(maxCredits === undefined ? {} : { max_credits: maxCredits }),
      });
      setMessage(
        `${cellsText(r.queued)} queued${
          r.max_credits
            ? `; the run stops charging at ${creditText(r.max_credits)} ${r.max_credits === 1 ? 'credit' : 'credits'} and leaves the cells past it pending`
            : ''
        }`,
      );
    } catch (e) {
      // A cap the service refuses (422 on max_credits): said next to the field; nothing was queued.
      const refused = e instanceof ApiError && e.status === 422 ? e.fields.max_credits : undefined;
      if (refused) setCapError(`Not run: ${CAP_RULE} (The service says: ${refused}.)`);
      else setError((e as Error).message);
    }
  };
  if (toolColumns.length === 0) return null;
  return (
    <details class="query">
      <summary>Run a tool column</summary>
      <div class="stack wide">
        <label for="run-column">Column</label>
        <select id="run-column" value={colId} onChange={(e) => setColId((e.target as HTMLSelectElement).value)}>
          <option value="">Choose a column…</option>
          {toolColumns.map((c) => (
            <option key={c.col_id} value={c.col_id}>
              {c.name}
            </option>
          ))}
        </select>
        {estimate && (
          <p data-testid="estimate">
            {cellsText(estimate.cells)} to run; expected about {creditText(estimate.credits_expected)} credits, at most{' '}
            {creditText(estimate.credits_max)}; balance {creditText(estimate.balance)} → about {creditText(estimate.balance_after)} after.
          </p>
        )}
        {estimate && estimate.credits_max > estimate.balance && (
          <p class="warning" data-testid="estimate-warning">
            The balance may not cover every cell (at most {creditText(estimate.credits_max)} credits, balance {creditText(estimate.balance)}
            ): cells it cannot pay for stop at insufficient_credits.
          </p>
        )}
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
        <ErrorNote message={error} />
        {message && <p role="status">{message}</p>}
        <button type="button" class="primary" disabled={!estimate || estimate.cells === 0} onClick={run}>
          Run {estimate ? estimate.cells.toLocaleString() : ''} cells
        </button>
      </div>
    </details>
  );
}
