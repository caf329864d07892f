import { EXAMPLE_IDS } from '../../core/operations/examples.ts';
import type { Json } from './openapi-schemas.ts';
import type { RouteSpec } from './route-chain.ts';

/**
 * A chained route's OpenAPI entry, completed with what the chain itself answers (docs/api.md):
 * the headers of every answer (x-request-id; RateLimit-* for key callers; Retry-After on 429 and
 * 503) and the refusals of each step — 401 and 429 for a key caller, 403 of a plan without API
 * access, 404 of another workspace's project, 413/415 of a JSON body, 409 of a running
 * Idempotency-Key, 500 and 503. What the route's own entry says of a status wins.
 */

const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** An error answer of a route outside the table: why, and an example `detail`. */
export const failure = (description: string, detail: string): Json => ({
  description,
  headers: { 'x-request-id': { $ref: '#/components/headers/X-Request-Id' } },
  content: {
    'application/json': {
      schema: { type: 'object', required: ['detail'], properties: { detail: { description: 'What went wrong, and what to do.' } } },
      example: { detail },
    },
  },
});

/** The path parameter of every project route outside the table. */
export const PROJECT_ID_PARAMETER: Json = {
  name: 'project_id',
  in: 'path',
  required: true,
  description: 'Project UUID.',
  schema: { type: 'string', maxLength: 128 },
  example: EXAMPLE_IDS.project,
};

function answerHeaders(keyed: boolean, retryAfter: boolean): Json {
  return {
    'x-request-id': headerRef('X-Request-Id'),
    ...(keyed
      ? {
          'RateLimit-Limit': headerRef('RateLimit-Limit'),
          'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
          'RateLimit-Reset': headerRef('RateLimit-Reset'),
        }
      : {}),
    ...(retryAfter ? { 'Retry-After': headerRef('Retry-After') } : {}),
  };
}

const error = (description: string, detail: string): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' }, example: { detail } } },
});

/** The refusals the chain's steps answer for this route, by status. */
function chainRefusals(spec: RouteSpec, keyed: boolean): Record<string, Json> {
  const out: Record<string, Json> = {};
  if (keyed) {
    out[401] = error(
      'The service-api-key header is missing, unknown or revoked (or no console session was sent).',
      'Missing API key: send it in the service-api-key header (or sign in at /login)',
    );
    out[403] = error('The workspace’s plan has no API access.', 'The workspace\'s plan "free" has no API access; upgrade it');
    out[429] = error(
      'Over the plan’s requests per minute for this key; wait Retry-After seconds.',
      'Too many requests: the pro plan allows 1200 per minute per key; retry in 2 s',
    );
  }
  if (spec.projectParam) {
    out[404] = error(
      'The project of the path is not in this workspace (or was deleted).',
      'Project 42 not found (or not in this workspace)',
    );
  }
  if (spec.method === 'POST' && spec.body === 'stream') {
    out[409] = error(
      'A request with the same Idempotency-Key is still running; retry shortly.',
      'A request with this Idempotency-Key is still running; retry shortly',
    );
  }
  if (spec.body === 'json') {
    out[413] = error(
      'The body is larger than the route takes (MAX_BODY_BYTES).',
      'The body is 10485761 bytes; the limit is 10485760 (MAX_BODY_BYTES)',
    );
    if (!spec.anyMediaType) {
      out[415] = error(
        'The body was not sent with Content-Type: application/json.',
        'The body must be JSON sent with "Content-Type: application/json", not "text/plain"',
      );
    }
  }
  out[500] = error(
    'Unexpected error; the server log holds it under the request id.',
    'Internal error; the server log has the details under request 01a20a82-5d9f-7515-9251-170a7bfaab62',
  );
  out[503] = error(
    'The database is unreachable; nothing was changed. Retry after Retry-After seconds.',
    'The database is unreachable; nothing was changed. Retry in a few seconds (request 01a20a82-5d9f-7515-9251-170a7bfaab62)',
  );
  return out;
}

/** The route's entry with the chain's statuses and headers added. */
export function chainedRouteDoc(spec: RouteSpec, doc: Json): Json {
  const keyed = spec.caller !== 'none' && spec.caller !== 'session';
  const own = (doc.responses ?? {}) as Record<string, Json>;
  const responses: Record<string, Json> = { ...chainRefusals(spec, keyed), ...own };
  for (const [status, response] of Object.entries(responses)) {
    const retryAfter = status === '429' || status === '503';
    const given = (response.headers ?? {}) as Json;
    responses[status] = { ...response, headers: { ...answerHeaders(keyed && status !== '401', retryAfter), ...given } };
  }
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return { ...doc, responses: sorted };
}
