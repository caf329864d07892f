import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { FieldError } from '../errors.ts';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

/** Whether `value` fits `schema` (compiled once per schema): narrows an untyped value to the schema's type. */
export function fits<S extends TSchema>(schema: S, value: unknown): value is Static<S> {
  return checker(schema).Check(value);
}

/** "/filters/revenue_range/min" → "filters.revenue_range.min"; the root is "(body)". */
function dotted(path: string, root: string): string {
  const p = path.replace(/^\//, '').replace(/\//g, '.');
  return p === '' ? root : root ? `${root}.${p}` : p;
}

/**
 * Every problem of `value` against `schema`, one per field, with messages a user can act on.
 * An unexpected property is reported by its own name so the caller knows what to remove.
 */
export function schemaErrors(schema: TSchema, value: unknown, root = ''): FieldError[] {
  const c = checker(schema);
  if (c.Check(value)) return [];
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of c.Errors(value)) {
    const path = e.path;
    let message = e.message;
    if (message.startsWith('Unexpected property')) message = 'is not an allowed field; remove it';
    else message = message.charAt(0).toLowerCase() + message.slice(1);
    const key = dotted(path, root);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: key === '' ? '(root)' : key, message });
  }
  return out;
}

/**
 * Query strings arrive as text: "5" becomes 5 and "true" becomes true where the schema asks.
 * Stricter than Value.Convert, which would read "1.5" or "1e2" as the integer 1.
 */
export function queryValue(schema: TSchema, raw: string): unknown {
  const t = raw.trim();
  switch (schema.type) {
    case 'integer':
      return /^[+-]?\d{1,15}$/.test(t) ? Number(t) : raw;
    case 'number':
      return t !== '' && Number.isFinite(Number(t)) ? Number(t) : raw;
    case 'boolean':
      return t === 'true' ? true : t === 'false' ? false : raw;
    default:
      return raw;
  }
}
