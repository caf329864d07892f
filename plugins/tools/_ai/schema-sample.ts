/**
 * Made-up values that fit a JSON Schema, for the sandbox twins of the AI tools (ai_prompt,
 * research_agent): the subset structured outputs use — objects, arrays, enums, const, strings,
 * numbers, booleans, anyOf/oneOf — so a sandbox column shows the shape a live run would. Strings
 * say "sandbox" so nobody takes them for a model's answer.
 */

export type SampleSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, SampleSchema>;
  items?: SampleSchema;
  anyOf?: SampleSchema[];
  oneOf?: SampleSchema[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  format?: string;
};

/** A string of the format asked for, when it has a usual one; else text saying "sandbox". */
function sampleString(schema: SampleSchema, name: string): string {
  switch (schema.format) {
    case 'uri':
    case 'url':
      return `https://sandbox.example.com/${encodeURIComponent(name)}`;
    case 'email':
      return 'sandbox@example.com';
    case 'date':
      return '2024-01-01';
    case 'date-time':
      return '2024-01-01T00:00:00Z';
    default:
      return `sandbox ${name}`;
  }
}

/** A number within the schema's bounds (0–100 when it sets none). */
function sampleNumber(schema: SampleSchema, rand: () => number, integer: boolean): number {
  const low = schema.minimum ?? Math.min(0, schema.maximum ?? 0);
  const high = schema.maximum ?? low + 100;
  const n = low + rand() * (high - low);
  return integer ? Math.min(Math.floor(high), Math.max(Math.ceil(low), Math.floor(n))) : Math.round(n * 100) / 100;
}

/** A value fitting `schema` (`name`: the property it is for, shown in strings); the same `rand` gives the same value. */
export function sampleValue(schema: SampleSchema, name: string, rand: () => number, depth = 0): unknown {
  if (depth > 6) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[Math.floor(rand() * schema.enum.length)];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt?.length) return sampleValue(alt[0] as SampleSchema, name, rand, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, sampleValue(s, k, rand, depth + 1)]));
    case 'array':
      return schema.items
        ? Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sampleValue(schema.items as SampleSchema, name, rand, depth + 1))
        : [];
    case 'string':
      return sampleString(schema, name);
    case 'integer':
      return sampleNumber(schema, rand, true);
    case 'number':
      return sampleNumber(schema, rand, false);
    case 'boolean':
      return rand() < 0.5;
    default:
      return null;
  }
}
