import type { TSchema } from '@sinclair/typebox';
import { isJsonQueryParam } from '../../core/operations/json-query.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { responsesOf } from './openapi-responses.ts';
import { CHECKED_SHAPES, type Json, schemaObject, schemaRef } from './openapi-schemas.ts';
import { tagOf } from './openapi-tags.ts';

/** The path and query parameters of an operation, each described, with the example's values. */
function parametersOf(op: AnyOperation): Json[] {
  const parameters: Json[] = [];
  for (const [where, schema, examples] of [
    ['path', op.params, op.example?.params],
    ['query', op.query, op.example?.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set(schema.required ?? []);
    for (const [name, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
      const { description, ...rest } = schemaObject(prop);
      const json = isJsonQueryParam(prop);
      // URL-encoded JSON: a string to the URL, with the shape its text must have.
      const shape = json && CHECKED_SHAPES[name] ? { contentSchema: schemaRef(CHECKED_SHAPES[name]) } : {};
      const example = (examples as Record<string, unknown> | undefined)?.[name];
      parameters.push({
        name,
        in: where,
        description,
        required: where === 'path' || (required.has(name) && rest.default === undefined),
        schema: { ...rest, ...shape },
        ...(example === undefined ? {} : { example: json ? JSON.stringify(example) : example }),
      });
    }
  }
  if (op.method === 'POST') parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return parameters;
}

/** A property that accepts anything (`{}`) or an array of anything, for its handler to check. */
function loose(schema: Json): boolean {
  const keys = Object.keys(schema).filter((k) => k !== 'description');
  if (keys.length === 0) return true;
  const items = schema.items as Json | undefined;
  return schema.type === 'array' && keys.length === 2 && items !== undefined && Object.keys(items).length === 0;
}

/** The JSON body, its loosely checked fields shown with their real shape. */
function requestBodyOf(op: AnyOperation, body: TSchema): Json {
  const schema = schemaObject(body);
  const properties = schema.properties as Record<string, Json> | undefined;
  for (const [name, shape] of Object.entries(CHECKED_SHAPES)) {
    const prop = properties?.[name];
    if (properties && prop && loose(prop)) {
      properties[name] = prop.description === undefined ? schemaRef(shape) : { ...schemaRef(shape), description: prop.description };
    }
  }
  return {
    required: true,
    content: { 'application/json': { schema, ...(op.example?.body === undefined ? {} : { example: op.example.body }) } },
  };
}

/** The OpenAPI operation of one operation of the table: a route's `detail`, gathered by apiDocs. */
export function openapiOperation(op: AnyOperation): Json {
  const parameters = parametersOf(op);
  return {
    operationId: op.name,
    summary: op.summary,
    description: op.description,
    tags: [tagOf(op.path)],
    ...(parameters.length ? { parameters } : {}),
    ...(op.body ? { requestBody: requestBodyOf(op, op.body) } : {}),
    responses: responsesOf(op),
    security: [{ apiKey: [] }],
    'x-agent-hint': op.hint,
  };
}
