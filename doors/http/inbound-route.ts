import { EXAMPLE_COMPANY, EXAMPLE_IDS } from '../../core/operations/examples.ts';
import { inboundTarget, receiveInbound } from '../../core/services/inbound.ts';
import { failure } from './route-doc.ts';
import type { Json } from './openapi-schemas.ts';
import type { RouteSpec } from './route-chain.ts';

/** The OpenAPI entry of POST …/inbound/{token} (no API key: the URL is the credential). */
const inboundOperation: Json = {
  operationId: 'post_inbound_rows',
  summary: 'Send rows to an inbound URL',
  description:
    'Adds rows to the project of an inbound URL (made by POST /projects/{project_id}/inbound), with no API key: the URL is the secret. The body is one company map (column name → value; bare or as {"company": {…}}) or an array of up to 1000 of them. Input columns left out stay empty; unique keys apply (an existing key is not added again); auto-run columns start. Rate-limited as the workspace’s plan limits a caller.',
  tags: ['Rows'],
  parameters: [
    {
      name: 'token',
      in: 'path',
      required: true,
      description: 'The secret end of the inbound URL (create_inbound_url).',
      schema: { type: 'string' },
      example: 'in_q0bS5pV0pX1gA6yT3r9mWc2dLkE8hJ4n',
    },
  ],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: {}, example: [EXAMPLE_COMPANY] } },
  },
  responses: {
    201: {
      description: 'The rows were added (created counts the new ones; existing those whose unique key the project held).',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['project_id', 'row_ids', 'created', 'existing'],
            properties: {
              project_id: { type: 'string' },
              row_ids: { type: 'array', items: { type: 'string' } },
              created: { type: 'integer' },
              existing: { type: 'integer' },
            },
          },
          example: { project_id: EXAMPLE_IDS.project, row_ids: ['21'], created: 1, existing: 0 },
        },
      },
    },
    404: failure(
      'No inbound URL here (replaced, turned off, or its project deleted).',
      'No inbound URL here: it was replaced or turned off',
    ),
    413: failure('The body is over MAX_BODY_BYTES.', 'The body is 20000000 bytes; the limit is 10485760 (MAX_BODY_BYTES)'),
    422: failure(
      'The body is not JSON, not a company map or an array of them, or a row names a column the project does not have (or a tool column); nothing was written.',
      'Invalid payload: no column is named "Fax". Remove that key.',
    ),
    429: failure('Over the plan’s requests per minute.', 'Too many requests: the pro plan allows 1200 per minute per key; retry in 3 s'),
  },
  security: [{}],
};

/** `POST {BASE_PATH}/inbound/{token}`: rows from other systems, keyless (docs/enrichment.md). */
export const inboundRoute: RouteSpec = {
  method: 'POST',
  path: '/inbound/{token}',
  // The URL is the credential; the access log names the route, never the URL (its last segment is the secret).
  caller: 'none',
  body: 'json',
  // Senders are other systems (form tools, CRMs) that do not always label their JSON.
  anyMediaType: true,
  doc: inboundOperation,
  async handle(ctx) {
    const target = await inboundTarget(ctx.kernel, ctx.params.token ?? '');
    const out = await receiveInbound(ctx.kernel, target, await ctx.json());
    return Response.json(out.body, { status: 201, headers: { ...out.headers, 'cache-control': 'no-store' } });
  },
};
