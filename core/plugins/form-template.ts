import { Kind, type TSchema } from '@sinclair/typebox';

/** A range object is an object schema whose only properties are `min` and `max`. */
function isRange(schema: TSchema): boolean {
  if (schema.type !== 'object' || !schema.properties) return false;
  const keys = Object.keys(schema.properties).sort();
  return keys.length === 2 && keys[0] === 'max' && keys[1] === 'min';
}

function isBooleanOnly(schema: TSchema): boolean {
  return schema.type === 'boolean';
}

/**
 * The empty catalog template of a form schema (spec "Builder catalog item"): scalars and unions
 * that accept a string are `""`, arrays `[]`, range objects `{}`, nested objects recurse, and
 * boolean-only fields are omitted (they are sent only when needed).
 */
export function emptyTemplate(schema: TSchema): unknown {
  if (schema.type === 'array') return [];
  if (schema.type === 'object') {
    if (isRange(schema)) return {};
    const out: Record<string, unknown> = {};
    for (const [key, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
      if (isBooleanOnly(prop)) continue;
      out[key] = emptyTemplate(prop);
    }
    return out;
  }
  if (schema[Kind] === 'Union' && Array.isArray(schema.anyOf)) {
    const arm = (schema.anyOf as TSchema[]).find((s) => s.type === 'array' || s.type === 'object');
    if (arm && !(schema.anyOf as TSchema[]).some((s) => s.type === 'string')) return emptyTemplate(arm);
  }
  return '';
}
