import { plainMessage } from '../words.ts';
import { AnswerFields, isObjectSchemaField } from './answer-fields.tsx';
import { isTextMap, KeyValues } from './key-values.tsx';

/**
 * A form drawn from a JSON Schema (a builder's or a tool's TypeBox schema, as GET /project-builders
 * and GET /tools give them): objects as fieldsets, strings, numbers within their bounds, booleans,
 * lists of strings, choices, name → text maps (key-values.tsx), the JSON Schema of an answer as its fields
 * (answer-fields.tsx). The value it edits is what the API takes; optional fields left empty
 * are left out. Server validation errors are shown on their fields by path (`form_data.filters.x`).
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
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

type FieldProps = {
  name: string;
  schema: JsonSchema;
  path: string;
  value: unknown;
  required: boolean;
  errors: Record<string, string>;
  onChange(v: unknown): void;
};

/** Fields made of fields: an answer's JSON Schema, a name → text map, an object's properties. */
function GroupField(props: FieldProps & { id: string; error: string | undefined; type: string | undefined }) {
  const { name, schema, path, value, required, errors, id, error, type } = props;
  if (isObjectSchemaField(schema)) {
    return (
      <AnswerFields
        id={id}
        label={`${label(name)}${required ? ' *' : ''}`}
        value={value}
        error={error}
        hint={schema.description && plainMessage(schema.description)}
        onChange={props.onChange}
      />
    );
  }
  if (isTextMap(schema)) {
    return (
      <KeyValues
        id={id}
        label={label(name)}
        value={value}
        error={error}
        hint={schema.description && plainMessage(schema.description)}
        onChange={props.onChange}
      />
    );
  }
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
  return null;
}

function Field(props: FieldProps) {
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
  const group = GroupField({ ...props, id, error, type });
  if (group) return group;
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
  // A choice: an enum, or a union of constants (TypeBox's Union of Literals).
  const choices = schema.enum ?? (schema.anyOf?.every((s) => s.const !== undefined) ? schema.anyOf.map((s) => s.const) : undefined);
  if (choices) {
    return (
      <div class="field">
        {title}
        <select {...common} value={String(value ?? '')} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
          {!required && <option value="">—</option>}
          {choices.map((o) => (
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
