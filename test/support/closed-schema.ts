import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

const closedCache = new WeakMap<TSchema, TSchema>();

/**
 * The schema with every object closed: an object schema that does not say otherwise gets
 * `additionalProperties: false`, so a field an answer carries but its schema omits is an error
 * (a schema only open to extra fields would accept an answer it does not describe).
 */
export function closed(schema: TSchema): TSchema {
  let out = closedCache.get(schema);
  if (!out) {
    out = close(schema);
    closedCache.set(schema, out);
  }
  return out;
}

function close(s: TSchema): TSchema {
  // Spreading keeps TypeBox's symbol keys (Kind, Hint), which Value.Check needs.
  const copy: TSchema = { ...s };
  if (s.type === 'object' && s.properties && s.additionalProperties === undefined) copy.additionalProperties = false;
  for (const key of ['properties', 'patternProperties'] as const) {
    if (s[key]) copy[key] = Object.fromEntries(Object.entries(s[key] as Record<string, TSchema>).map(([k, v]) => [k, close(v)]));
  }
  if (s.items && !Array.isArray(s.items)) copy.items = close(s.items as TSchema);
  for (const key of ['anyOf', 'allOf', 'oneOf'] as const) {
    if (Array.isArray(s[key])) copy[key] = (s[key] as TSchema[]).map(close);
  }
  return copy;
}

/** Every way `value` breaks the closed `schema`, as "path: message" lines (none when it fits). */
export function closedSchemaErrors(schema: TSchema, value: unknown): string[] {
  const c = closed(schema);
  if (Value.Check(c, value)) return [];
  return [...Value.Errors(c, value)].map((e) => `${e.path || '/'}: ${e.message} (got ${JSON.stringify(e.value)?.slice(0, 120)})`);
}
