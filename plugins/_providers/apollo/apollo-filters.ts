import { Type } from 'workflow-service/plugin-sdk';

/** Schema pieces of the two Apollo-compatible search builders' forms. */
export const StringList = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));

export const Range = (description: string) =>
  Type.Optional(
    Type.Object(
      {
        min: Type.Optional(Type.Union([Type.Number(), Type.String()])),
        max: Type.Optional(Type.Union([Type.Number(), Type.String()])),
      },
      { additionalProperties: false, description: `${description} Send {} or {min, max}.` },
    ),
  );

export const Text = (description: string) => Type.Optional(Type.String({ description }));

/** Drops keys the caller left at their template value ("", [], {}) so the provider sees only real filters. */
export function activeFilters(filters: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(filters)) {
    if (v === '' || v === null || v === undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return out;
}
