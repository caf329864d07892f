import { seededRandom } from 'workflow-service/plugin-sdk';

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

/**
 * A made-up value that fits a JSON schema (the subset structured outputs use: objects, arrays,
 * enums, strings, numbers, booleans, anyOf), so a sandbox column shows the shape a live run would.
 * Strings say "sandbox" so nobody takes them for a model's answer.
 */
function fake(schema: Schema, name: string, rand: () => number, depth: number): unknown {
  if (depth > 6) return null;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[Math.floor(rand() * schema.enum.length)];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt?.length) return fake(alt[0] as Schema, name, rand, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, fake(s, k, rand, depth + 1)]));
    case 'array':
      return schema.items ? [fake(schema.items, name, rand, depth + 1)] : [];
    case 'string':
      return `sandbox ${name}`;
    case 'integer':
      return Math.floor(rand() * 100);
    case 'number':
      return Math.round(rand() * 10000) / 100;
    case 'boolean':
      return rand() < 0.5;
    default:
      return null;
  }
}

/** The sandbox twin's answer: a fake object for a schema, else a text that quotes the prompt. */
export function sandboxAnswer(prompt: string, schema: Record<string, unknown> | undefined): unknown {
  if (schema) return fake(schema as Schema, 'value', seededRandom(`ai:${prompt}`), 0);
  return `[sandbox answer] ${prompt.replace(/\s+/g, ' ').trim().slice(0, 120)}`;
}
