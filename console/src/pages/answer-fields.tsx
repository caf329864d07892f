import { useState } from 'preact/hooks';
import { FieldGroup, type GroupProps } from './field-group.tsx';
import type { JsonSchema } from './schema-form.tsx';

/**
 * A config field that is itself the JSON Schema of an object (its `type` must be "object": an LLM
 * tool's output schema) drawn as the answer's fields — name, kind, description, required — as
 * Clay's "define outputs" does; "Edit as JSON" for any other keyword (enum, items, pattern…). What a
 * field holds beyond kind and description is kept when its row is edited.
 */

export const isObjectSchemaField = (s: JsonSchema): boolean => s.type === 'object' && s.properties?.type?.const === 'object';

type FieldSchema = Record<string, unknown> & { type?: unknown; description?: string };
interface ObjectSchema {
  type: 'object';
  properties: Record<string, FieldSchema>;
  required?: string[];
  additionalProperties?: boolean;
  [k: string]: unknown;
}
interface FieldRow {
  name: string;
  schema: FieldSchema;
  required: boolean;
}

const KINDS: [kind: string, label: string, schema: FieldSchema][] = [
  ['string', 'Text', { type: 'string' }],
  ['number', 'Number', { type: 'number' }],
  ['integer', 'Whole number', { type: 'integer' }],
  ['boolean', 'Yes / no', { type: 'boolean' }],
  ['string[]', 'List of texts', { type: 'array', items: { type: 'string' } }],
];

const kindOf = (s: FieldSchema): string =>
  s.type === 'array' && (s.items as FieldSchema | undefined)?.type === 'string'
    ? 'string[]'
    : typeof s.type === 'string'
      ? s.type
      : 'other';

function rowsOf(value: unknown): FieldRow[] {
  const v = value as Partial<ObjectSchema> | undefined;
  return Object.entries(v?.properties ?? {}).map(([name, schema]) => ({ name, schema, required: v?.required?.includes(name) ?? false }));
}

/** The schema the rows make (strict: no other fields, as structured outputs ask); none without fields. */
function schemaOf(rows: FieldRow[], before: unknown): ObjectSchema | undefined {
  const named = rows.filter((r) => r.name.trim());
  if (!named.length) return undefined;
  const { properties: _p, required: _r, ...rest } = (before ?? {}) as Partial<ObjectSchema>;
  return {
    additionalProperties: false,
    ...rest,
    type: 'object',
    properties: Object.fromEntries(named.map((r) => [r.name.trim(), r.schema])),
    required: named.filter((r) => r.required).map((r) => r.name.trim()),
  };
}

export function AnswerFields(props: GroupProps & { onChange(v: unknown): void }) {
  const [rows, setRows] = useState<FieldRow[]>(() => rowsOf(props.value));
  const [json, setJson] = useState<string | undefined>(undefined);
  const [jsonError, setJsonError] = useState<string | undefined>(undefined);
  const change = (next: FieldRow[]) => {
    setRows(next);
    props.onChange(schemaOf(next, props.value));
  };
  const edit = (i: number, patch: Partial<FieldRow>) => change(rows.map((r, k) => (k === i ? { ...r, ...patch } : r)));
  const setKind = (i: number, kind: string) => {
    const row = rows[i] as FieldRow;
    const { type: _t, items: _i, ...kept } = row.schema;
    const base = KINDS.find(([k]) => k === kind)?.[2] ?? {};
    edit(i, { schema: { ...kept, ...base } });
  };
  return (
    <FieldGroup {...props} class="answer-fields">
      {json === undefined ? (
        <>
          {rows.length > 0 && (
            <table class="answer-fields-table">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Kind</th>
                  <th scope="col">What it holds</th>
                  <th scope="col">Required</th>
                  <th scope="col">
                    <span class="visually-hidden">Remove</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r, i) => {
                  const n = i + 1;
                  const kind = kindOf(r.schema);
                  return (
                    // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id of their own while their name is typed
                    <tr key={i}>
                      <td>
                        <input
                          aria-label={`Name of field ${n}`}
                          value={r.name}
                          onInput={(e) => edit(i, { name: (e.target as HTMLInputElement).value })}
                        />
                      </td>
                      <td>
                        <select
                          aria-label={`Kind of field ${n}`}
                          value={kind}
                          onChange={(e) => setKind(i, (e.target as HTMLSelectElement).value)}
                        >
                          {KINDS.map(([k, l]) => (
                            <option key={k} value={k}>
                              {l}
                            </option>
                          ))}
                          {kind === 'other' && <option value="other">Other (JSON)</option>}
                        </select>
                      </td>
                      <td>
                        <input
                          aria-label={`Description of field ${n}`}
                          value={r.schema.description ?? ''}
                          onInput={(e) => {
                            const description = (e.target as HTMLInputElement).value;
                            const { description: _d, ...rest } = r.schema;
                            edit(i, { schema: description ? { ...rest, description } : rest });
                          }}
                        />
                      </td>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Field ${n} is required`}
                          checked={r.required}
                          onChange={(e) => edit(i, { required: (e.target as HTMLInputElement).checked })}
                        />
                      </td>
                      <td>
                        <button
                          type="button"
                          class="link"
                          aria-label={`Remove field ${n}`}
                          onClick={() => change(rows.filter((_, k) => k !== i))}
                        >
                          ×
                        </button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
          <p class="actions">
            <button type="button" onClick={() => change([...rows, { name: '', schema: { type: 'string' }, required: true }])}>
              + Field
            </button>
            <button type="button" class="link" onClick={() => setJson(JSON.stringify(schemaOf(rows, props.value) ?? {}, null, 2))}>
              Edit as JSON
            </button>
          </p>
        </>
      ) : (
        <div class="field">
          <label for={`${props.id}-json`}>JSON Schema</label>
          <textarea
            id={`${props.id}-json`}
            rows={10}
            value={json}
            aria-invalid={Boolean(jsonError)}
            onInput={(e) => setJson((e.target as HTMLTextAreaElement).value)}
          />
          {jsonError && <span class="field-error">{jsonError}</span>}
          <p class="actions">
            <button
              type="button"
              onClick={() => {
                try {
                  const parsed = json.trim() ? (JSON.parse(json) as ObjectSchema) : undefined;
                  if (parsed !== undefined && (typeof parsed !== 'object' || parsed === null || parsed.type !== 'object'))
                    throw new Error('The schema is an object with "type": "object" and its "properties".');
                  setJsonError(undefined);
                  setJson(undefined);
                  setRows(rowsOf(parsed));
                  props.onChange(parsed && Object.keys(parsed.properties ?? {}).length ? parsed : undefined);
                } catch (err) {
                  setJsonError(err instanceof SyntaxError ? `Not JSON: ${err.message}` : (err as Error).message);
                }
              }}
            >
              Use this schema
            </button>
          </p>
        </div>
      )}
    </FieldGroup>
  );
}
