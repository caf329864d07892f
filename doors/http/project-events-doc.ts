import { EXAMPLE_IDS } from '../../core/operations/examples.ts';
import type { Json } from './openapi-schemas.ts';
import { failure, PROJECT_ID_PARAMETER } from './route-doc.ts';

const STREAM = `A Server-Sent Events stream (text/event-stream). Each event has an \`id\` (send the last one back as
\`Last-Event-ID\` to resume), a name and JSON data:

- \`cells\`: \`{"col_id", "cells": [{"row_id", "status", "value", "error"}]}\` — results written (with
  \`value\` and \`error\`) or statuses moved (\`queued\`, \`running\`…, without them);
- \`rows\`: \`{"added", "deleted"}\`;
- \`builder\`: \`{"builder_status": {"type", "error_message", "progress"}}\`, as GET /projects/{project_id} shows it;
- \`columns\`: \`{}\` — a column was added or deleted (read the project for it);
- \`deleted\`: \`{"detail"}\` — the project was deleted; the stream ends after it;
- \`reset\`: the events after your \`Last-Event-ID\` are no longer kept: read the project and its rows again.

A comment line every 15 s keeps the connection open; the stream ends when the process shuts down (reconnect,
with \`Last-Event-ID\`: nothing is lost).`;

/** The OpenAPI entry of GET …/projects/{project_id}/events (a stream, so not an operation of the table). */
export const projectEventsOperation: Json = {
  operationId: 'watch_project_events',
  summary: 'Watch a project: cell results, rows, builder progress (Server-Sent Events)',
  description: `${STREAM}\n\nWorks with an API key or a console session, and with separate worker processes (events travel through Redis when REDIS_URL is set). Browsers' EventSource cannot send headers: it may pass \`last_event_id\` in the query instead.`,
  tags: ['Projects'],
  parameters: [
    PROJECT_ID_PARAMETER,
    {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description:
        'The id of the last event received: the stream starts after it. `0-0`: every event still kept (for a project just created).',
      schema: { type: 'string', pattern: '^\\d{1,16}-\\d{1,16}$' },
      example: '1732500000000-0',
    },
    {
      name: 'last_event_id',
      in: 'query',
      required: false,
      description: 'The same, for clients that cannot send headers.',
      schema: { type: 'string', pattern: '^\\d{1,16}-\\d{1,16}$' },
    },
  ],
  responses: {
    200: {
      description: STREAM,
      content: {
        'text/event-stream': {
          schema: { type: 'string' },
          example: `id: 1732500000000-0\nevent: cells\ndata: {"col_id":"c_8f2k","cells":[{"row_id":"21","status":"completed","value":"acme.com","error":null}]}\n\n`,
        },
      },
    },
    401: failure(
      'The service-api-key header is missing, unknown or revoked (and no session).',
      'Missing API key: send it in the service-api-key header (or sign in at /login)',
    ),
    403: failure('The workspace’s plan has no API access.', 'The workspace\'s plan "free" has no API access; upgrade it'),
    404: failure('The project_id names nothing in this workspace.', `Project ${EXAMPLE_IDS.project} not found (or not in this workspace)`),
    422: failure(
      'Last-Event-ID is not an id this stream sends.',
      'Last-Event-ID is an event id as the stream sent it (like 1732500000000-0)',
    ),
    429: failure('Over the plan’s requests per minute.', 'Too many requests: the pro plan allows 1200 per minute per key; retry in 3 s'),
  },
  security: [{ apiKey: [] }],
};
