import type { ErrorDetail } from '../../core/errors.ts';
import { EXAMPLE_IDS } from '../../core/operations/examples.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { type Json, schemaObject, schemaRef } from './openapi-schemas.ts';

/** `components.headers`: what answers carry (x-request-id always; RateLimit-* once the key is known; Retry-After on 429 and 503). */
export const RESPONSE_HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'The id of this request, also in its access-log line; quote it when asking about an answer.',
    required: true,
    schema: { type: 'string' },
    example: '01a20a82-5d9f-7515-9251-170a7bfaab62',
  },
  'RateLimit-Limit': {
    description:
      'Requests per minute the key’s plan allows. Sent on every answer to a request whose key was recognised, when its plan sets a request rate (the default plans do).',
    schema: { type: 'integer', minimum: 0 },
    example: 1200,
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the key’s bucket now. Sent with RateLimit-Limit.',
    schema: { type: 'integer', minimum: 0 },
    example: 1187,
  },
  'RateLimit-Reset': {
    description: 'Seconds until the key’s bucket is full again. Sent with RateLimit-Limit.',
    schema: { type: 'integer', minimum: 0 },
    example: 1,
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
    example: 5,
  },
};

/** `components.parameters`: the header every POST operation honours. */
export const PARAMETERS: Record<string, Json> = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Any unique string (a UUID): a retry with the same key and the same request gets the first answer, and nothing is done or charged twice. The same key with another request is a 422; while the first call with it still runs, a 409.',
    schema: { type: 'string', minLength: 1, maxLength: 191 },
    example: '5f0c8a52-6a8e-4f4e-9a43-0b8e1f7d2c11',
  },
};

const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

function headers(retryAfter: boolean): Json {
  return {
    'x-request-id': headerRef('X-Request-Id'),
    'RateLimit-Limit': headerRef('RateLimit-Limit'),
    'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
    'RateLimit-Reset': headerRef('RateLimit-Reset'),
    ...(retryAfter ? { 'Retry-After': headerRef('Retry-After') } : {}),
  };
}

interface ErrorCase {
  description: string;
  example: ErrorDetail;
  retryAfter?: boolean;
}

const validation = (message: string, path: string, problem: string): ErrorDetail => ({ message, errors: [{ path, message: problem }] });

/** What a 422 of this operation typically says: about its query, its body, or an id of its path. */
function invalidExample(op: AnyOperation): ErrorDetail {
  if (op.invalidStatus || !(op.params || op.query || op.body)) {
    return { message: 'This Idempotency-Key was already used with a different request; use a new key for a new request' };
  }
  if (op.query) {
    const props = Object.entries(op.query.properties);
    const integer = props.find(([, prop]) => prop.type === 'integer')?.[0];
    const [name, problem] = integer
      ? [integer, 'expected integer to be greater or equal to 1']
      : [props[0]?.[0] ?? 'q', 'expected string length greater or equal to 1'];
    return validation(`Invalid query parameters: ${name} ${problem}`, name, problem);
  }
  const required = (op.body?.required as string[] | undefined) ?? [];
  if (required[0]) return validation(`Invalid body: ${required[0]} expected required property`, required[0], 'expected required property');
  if (op.body) return validation('Invalid body: colour is not an allowed field; remove it', 'colour', 'is not an allowed field; remove it');
  const [id = 'id'] = Object.keys(op.params?.properties ?? {});
  return validation(`${id} is 300 characters long; ids are at most 128`, id, 'is longer than 128 characters');
}

/** The statuses an operation can answer besides its success, each with why and an example `detail`. */
function errorCases(op: AnyOperation): Record<number, ErrorCase> {
  const own = op.errors ?? {};
  const cases: Record<number, ErrorCase> = {};
  const hasInput = Boolean(op.params || op.query || op.body);
  if (op.invalidStatus === 400) {
    cases[400] = {
      description: own[400] ?? 'Invalid body.',
      example: validation(
        'Unknown builder_id "nope"; use one of: … (GET /project-builders lists them)',
        'builder_id',
        'is not a registered builder',
      ),
    };
  }
  cases[401] = {
    description: 'The service-api-key header is missing, unknown or revoked.',
    example: 'Missing API key: send it in the service-api-key header',
  };
  const keyCap =
    'The API key’s monthly credit cap is spent (detail.code key_cap_reached, detail.monthly_credits, detail.spent_this_month, detail.resets_at).';
  if (own[402] || op.spends) {
    cases[402] = {
      description: [own[402], op.spends ? keyCap : undefined].filter(Boolean).join(' Or: '),
      example: own[402]
        ? {
            code: 'insufficient_credits',
            message: 'This run needs 5 credits (5 rows × 1); the balance is 0. Lower max_results or add credits.',
            needed: 5,
            balance: 0,
          }
        : {
            code: 'key_cap_reached',
            message:
              "This API key's monthly cap of 500 credits is spent (500 spent this month, resets 2026-12-01T00:00:00.000Z). Raise it in the console (Settings → API keys) or with bun run admin key:cap, or use another key.",
            monthly_credits: 500,
            spent_this_month: 500,
            resets_at: '2026-12-01T00:00:00.000Z',
          },
    };
  }
  cases[403] = {
    description: [own[403], 'The workspace’s plan has no API access.'].filter(Boolean).join(' Or: '),
    example:
      op.invalidStatus === 403
        ? { message: 'Missing required columns: Name. Send a value (or null) for every input column.', missing_columns: ['Name'] }
        : 'The workspace\'s plan "free" has no API access; upgrade it',
  };
  if (op.project || op.owned) {
    const names = Object.keys(op.params?.properties ?? {}).join(', ');
    cases[404] = {
      description: own[404] ?? `The ${names} of the path names nothing in this workspace (or something deleted).`,
      example: op.project ? `Project ${EXAMPLE_IDS.project} not found (or not in this workspace)` : `ICP ${EXAMPLE_IDS.icp} not found`,
    };
  }
  if (op.method === 'POST') {
    cases[409] = {
      description: 'A request with the same Idempotency-Key is still running; retry shortly.',
      example: 'A request with this Idempotency-Key is still running; retry shortly',
    };
  }
  if (op.body) {
    cases[413] = {
      description: 'The body is larger than MAX_BODY_BYTES (10 MiB by default).',
      example: 'The body is 10485761 bytes; the limit is 10485760 (MAX_BODY_BYTES)',
    };
    cases[415] = {
      description: 'The body was not sent with Content-Type: application/json.',
      example: 'The body must be JSON sent with "Content-Type: application/json", not "text/plain"',
    };
  }
  const invalid = [
    own[422],
    hasInput &&
      (op.invalidStatus
        ? 'A path id longer than 128 characters.'
        : 'Invalid path, query or body (detail.message; detail.errors names each field).'),
    op.method === 'POST' && 'The Idempotency-Key was already used with a different request.',
  ].filter(Boolean);
  if (invalid.length) {
    cases[422] = {
      description: invalid.join(' Or: '),
      example: invalidExample(op),
    };
  }
  cases[429] = {
    description: 'Over the plan’s requests per minute for this key; wait Retry-After seconds.',
    example: 'Too many requests: the pro plan allows 1200 per minute per key; retry in 2 s',
    retryAfter: true,
  };
  cases[500] = {
    description: [own[500], 'Unexpected error; the server log holds it under the request id.'].filter(Boolean).join(' '),
    example: 'Internal error; the server log has the details under request 01a20a82-5d9f-7515-9251-170a7bfaab62',
  };
  cases[503] = {
    description: 'The database is unreachable; nothing was changed. Retry after Retry-After seconds.',
    example: 'The database is unreachable; nothing was changed. Retry in a few seconds (request 01a20a82-5d9f-7515-9251-170a7bfaab62)',
    retryAfter: true,
  };
  return cases;
}

/** An operation's `responses`: its success with its schema and example, then every error it can answer. */
export function responsesOf(op: AnyOperation): Json {
  const success = op.successStatus ?? 200;
  const responses: Json = {
    [success]: {
      description: op.response.description ?? (success === 201 ? 'Created.' : 'OK.'),
      headers: headers(false),
      content: {
        'application/json': { schema: schemaObject(op.response), ...(op.example ? { example: op.example.response } : {}) },
      },
    },
  };
  if (op.otherSuccess) {
    responses[op.otherSuccess.status] = {
      description: op.otherSuccess.description,
      headers: headers(false),
      content: { 'application/json': { schema: schemaObject(op.response), example: op.otherSuccess.example } },
    };
  }
  for (const [status, c] of Object.entries(errorCases(op))) {
    responses[status] = {
      description: c.description,
      headers: headers(c.retryAfter ?? false),
      content: { 'application/json': { schema: schemaRef('ErrorBody'), example: { detail: c.example } } },
    };
  }
  return responses;
}
