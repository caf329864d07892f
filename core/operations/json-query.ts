import { type StringOptions, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * A query parameter that carries JSON (`filter_groups`, `sort_rules`): documented as a string
 * holding JSON (URL-encoded on REST, an `<name>_json` argument on MCP), handed to the handler
 * parsed. Each door parses it once, in its own words when it is malformed.
 */
export function JsonQueryParam(options: StringOptions = {}): TUnsafe<unknown> {
  return Type.Unsafe<unknown>(Type.String({ ...options, contentMediaType: 'application/json' }));
}

/** Whether a query parameter's schema is a JsonQueryParam. */
export function isJsonQueryParam(schema: TSchema): boolean {
  return schema.type === 'string' && schema.contentMediaType === 'application/json';
}

/** A JSON query parameter as a door hands it over: a function that parses it (throwing the door's own error). */
export type JsonQueryValue = () => unknown;
