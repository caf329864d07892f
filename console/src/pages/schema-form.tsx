import { plainMessage } from '../words.ts';

/**
 * A form drawn from a JSON Schema (a builder's or a tool's TypeBox schema, as GET /project-builders
 * and GET /tools give them): objects as fieldsets, strings, numbers within their bounds, booleans,
 * lists of strings, choices. The value it edits is what the API takes; optional fields left empty
 * are left out. Server validation errors are shown on their fields by path (`form_data.filters.x`).
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  default?: unknown;
}

type Value = Record<string, unknown>;

const label = (name: string) =>
  name
    .replace(/^q_/, '')
    .replace(/_/g, ' ')
    .replace(/^\w/, (c) => c.toUpperCase());
const idOf = (path: string) => `f-${path.replace(/[^\w-]/g, '-')}`;
/** Long text: a CSV, a list of lines. */
const multiline = (name: string, s: JsonSchema) => /_text$|^companies$/.test(name) || /one per line|CSV/i.test(s.description ?? '');

/** The value without empty optional fields (empty strings, empty lists, empty objects). */
export function pruned(value: unknown, schema: JsonSchema): unknown {
  if (schema.type !== 'object' || typeof value !== 'object' || value === null) return value;
  const out: Value = {};
  for (const [k, v] of Object.entries(value as Value)) {
    const sub = schema.properties?.[k] ?? {};
    const p = pruned(v, sub);
    const empty =
      p === '' ||
      p === undefined ||
      (Array.isArray(p) && p.length === 0) ||
      (sub.type === 'object' && Object.keys(p as Value).length === 0);
    if (!empty || schema.required?.includes(k)) out[k] = p;
  }
  return out;
}

function Field(props: {
  name: string;
  schema: JsonSchema;
  path: string;
  value: unknown;
  required: boolean;
  errors: Record<string, string>;
  onChange(v: unknown): void;
}) {
  const { name, schema, path, value, required, errors } = props;
  const id = idOf(path);
  const error = errors[path];
  const hint = schema.description ? `${id}-hint` : undefined;
  const described = [hint, error ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  const common = { id, 'aria-describedby': described, 'aria-invalid': Boolean(error), required };
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const title = (
    <label for={id}>
      {label(name)}
      {required ? ' *' : ''}
    </label>
  );
  const notes = (
    <>
      {schema.description && (
        <small id={hint} class="hint">
          {plainMessage(schema.description)}
        </small>
      )}
      {error && (
        <span id={`${id}-error`} class="field-error">
          {error}
        </span>
      )}
    </>
  );
  if (type === 'object') {
    return (
      <fieldset class="group">
        <legend>{label(name)}</legend>
        {schema.description && <small class="hint">{plainMessage(schema.description)}</small>}
        {error && <span class="field-error">{error}</span>}
        <SchemaFields schema={schema} path={path} value={(value as Value) ?? {}} errors={errors} onChange={props.onChange} />
      </fieldset>
    );
  }
  if (type === 'boolean') {
    return (
      <div class="field check">
        <label>
          <input
            type="checkbox"
            {...common}
            required={false}
            checked={value === true}
            onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)}
          />{' '}
          {label(name)}
        </label>
        {notes}
      </div>
    );
  }
  if (schema.enum) {
    return (
      <div class="field">
        {title}
        <select {...common} value={String(value ?? '')} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
          {!required && <option value="">—</option>}
          {schema.enum.map((o) => (
            <option key={String(o)} value={String(o)}>
              {String(o)}
            </option>
          ))}
        </select>
        {notes}
      </div>
    );
  }
  if (type === 'array') {
    const list = Array.isArray(value) ? (value as unknown[]).map(String) : [];
    return (
      <div class="field">
        {title}
        <input
          {...common}
          required={false}
          placeholder="comma-separated"
          value={list.join(', ')}
          onInput={(e) =>
            props.onChange(
              (e.target as HTMLInputElement).value
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean),
            )
          }
        />
        {notes}
      </div>
    );
  }
  if (type === 'integer' || type === 'number') {
    return (
      <div class="field">
        {title}
        <input
          {...common}
          type="number"
          min={schema.minimum}
          max={schema.maximum}
          step={type === 'integer' ? 1 : 'any'}
          value={value === undefined || value === '' ? '' : String(value)}
          onInput={(e) => {
            const text = (e.target as HTMLInputElement).value;
            props.onChange(text === '' ? '' : Number(text));
          }}
        />
        {notes}
      </div>
    );
  }
  // Strings, and values that may be a number or a string (a revenue bound): typed as text.
  const text = value === undefined || value === null ? '' : String(value);
  const numeric = schema.anyOf?.some((s) => s.type === 'number');
  const onInput = (e: Event) => {
    const t = (e.target as HTMLInputElement | HTMLTextAreaElement).value;
    props.onChange(numeric && t.trim() !== '' && Number.isFinite(Number(t)) ? Number(t) : t);
  };
  return (
    <div class="field">
      {title}
      {multiline(name, schema) ? (
        <textarea {...common} rows={6} value={text} onInput={onInput} />
      ) : (
        <input {...common} value={text} onInput={onInput} />
      )}
      {notes}
    </div>
  );
}

export function SchemaFields(props: {
  schema: JsonSchema;
  path: string;
  value: Value;
  errors: Record<string, string>;
  onChange(v: Value): void;
}) {
  const { schema, path, value, errors } = props;
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, sub]) => (
        <Field
          key={name}
          name={name}
          schema={sub}
          path={`${path}.${name}`}
          value={value[name]}
          required={schema.required?.includes(name) ?? false}
          errors={errors}
          onChange={(v) => props.onChange({ ...value, [name]: v })}
        />
      ))}
    </>
  );
}
