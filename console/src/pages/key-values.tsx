import { useState } from 'preact/hooks';
import { FieldGroup, type GroupProps } from './field-group.tsx';
import type { JsonSchema } from './schema-form.tsx';

/**
 * A config field that maps names to texts (an object with no fixed properties whose values are
 * strings: request headers, a CRM field mapping) drawn as rows of name and value.
 */

export const isTextMap = (s: JsonSchema): boolean => {
  if (s.type !== 'object' || Object.keys(s.properties ?? {}).length > 0) return false;
  const values = [
    ...Object.values(s.patternProperties ?? {}),
    ...(typeof s.additionalProperties === 'object' ? [s.additionalProperties] : []),
  ];
  return values.length > 0 && values.every((v) => v.type === 'string');
};

type Entry = [key: string, value: string];

export function KeyValues(props: GroupProps & { onChange(v: Record<string, string> | undefined): void }) {
  const [rows, setRows] = useState<Entry[]>(() =>
    Object.entries((props.value ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v ?? '')]),
  );
  const change = (next: Entry[]) => {
    setRows(next);
    const named = next.filter(([k]) => k.trim());
    props.onChange(named.length ? Object.fromEntries(named.map(([k, v]) => [k.trim(), v])) : undefined);
  };
  return (
    <FieldGroup {...props} class="key-values">
      {rows.map(([k, v], i) => {
        const n = i + 1;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id of their own while their name is typed
          <div class="key-value" key={i}>
            <input
              aria-label={`${props.label} name ${n}`}
              placeholder="name"
              value={k}
              onInput={(e) => change(rows.map((r, j) => (j === i ? [(e.target as HTMLInputElement).value, r[1]] : r)))}
            />
            <input
              aria-label={`${props.label} value ${n}`}
              placeholder="value, e.g. {{Name}}"
              value={v}
              onInput={(e) => change(rows.map((r, j) => (j === i ? [r[0], (e.target as HTMLInputElement).value] : r)))}
            />
            <button
              type="button"
              class="link"
              aria-label={`Remove ${props.label} ${n}`}
              onClick={() => change(rows.filter((_, j) => j !== i))}
            >
              ×
            </button>
          </div>
        );
      })}
      <p class="actions">
        <button type="button" aria-label={`Add to ${props.label}`} onClick={() => change([...rows, ['', '']])}>
          + Add
        </button>
      </p>
    </FieldGroup>
  );
}
