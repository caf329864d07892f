import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { type FieldError, ServiceError } from '../errors.ts';
import { queryValue, schemaErrors } from '../schema/validate.ts';
import { isJsonQueryParam, type JsonQueryValue } from './json-query.ts';
import type { AnyOperation } from './operation.ts';

/**
 * The input of one call, translated by its door: path parameters, query parameters (text, as a
 * URL carries them, or a JsonQueryValue for those that carry JSON) and the body. Nothing is
 * parsed yet: the pipeline asks for each part after the caller's ownership is checked, so
 * another workspace's project is a 404 whatever the rest of the request holds.
 */
export interface CallInput {
  params: Record<string, string>;
  query: Record<string, string | JsonQueryValue>;
  /** Parses the body (throwing the door's own error when it is malformed). */
  body: () => unknown;
  /** Idempotency-Key (REST header) or idempotency_key (MCP argument), honoured on POST operations. */
  idempotencyKey?: string;
}

/** The operation's input once checked: what its handler receives. */
export interface CheckedInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

function invalid(op: AnyOperation, what: string, errors: FieldError[]): ServiceError {
  return new ServiceError(
    'validation_error',
    { message: `Invalid ${what}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors },
    { status: op.invalidStatus ?? 422 },
  );
}

function checked<S extends TSchema>(op: AnyOperation, what: string, schema: S, value: unknown): Static<S> {
  const errors = schemaErrors(schema, value, '');
  if (errors.length) throw invalid(op, what, errors);
  return value as Static<S>;
}

/** The query schema as checked after decoding: JSON parameters hold any parsed value (their handler checks it). */
const decodedQuerySchemas = new WeakMap<TObject, TObject>();

function decodedQuerySchema(schema: TObject): TObject {
  let decoded = decodedQuerySchemas.get(schema);
  if (!decoded) {
    const required = new Set(schema.required ?? []);
    const properties = Object.fromEntries(
      Object.entries(schema.properties).map(([key, prop]) => {
        if (!isJsonQueryParam(prop)) return [key, prop];
        return [key, required.has(key) ? Type.Unknown() : Type.Optional(Type.Unknown())];
      }),
    );
    decoded = Type.Object(properties, { additionalProperties: schema.additionalProperties });
    decodedQuerySchemas.set(schema, decoded);
  }
  return decoded;
}

/** Query text is converted where the schema asks ("5" → 5), JSON parameters parsed, defaults fill gaps. */
function queryInput(op: AnyOperation, schema: TObject, raw: CallInput['query']): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries(schema.properties)) {
    const value = raw[key];
    if (typeof value === 'function') input[key] = value();
    else if (value !== undefined) input[key] = queryValue(prop, value);
    else if (prop.default !== undefined) input[key] = prop.default;
  }
  return checked(op, 'query parameters', decodedQuerySchema(schema), input);
}

/** The validate step: path parameters, then query, then body, each against the operation's schema. */
export function checkInput(op: AnyOperation, input: CallInput): CheckedInput {
  const params = op.params ? checked(op, 'path parameters', op.params, input.params) : {};
  const query = op.query ? queryInput(op, op.query, input.query) : {};
  const body = op.body ? checked(op, 'body', op.body, input.body()) : undefined;
  return { params, query, body };
}
