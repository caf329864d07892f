import { Type } from '@sinclair/typebox';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import { createInboundUrl } from '../services/inbound.ts';
import { createWebhook, deliveryView, findWebhook, MAX_WEBHOOKS, resendDelivery, webhookView } from '../webhooks/webhooks.ts';
import { WEBHOOK_EVENTS } from '../webhooks/events.ts';
import { EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';

const ownWebhook = async ({ kernel, workspace, params }: { kernel: Kernel; workspace: Workspace; params: Record<string, string> }) => {
  await findWebhook(kernel, workspace, params.webhook_id ?? '');
};

const WebhookIdParams = Type.Object({ webhook_id: Type.String({ description: 'Webhook id (list_webhooks / GET /webhooks).' }) });

const EventType = Type.Union(
  WEBHOOK_EVENTS.map((e) => Type.Literal(e)),
  {
    description:
      'builder.completed / builder.failed: a project’s builder run ended; column.completed: a tool column has no cell queued or running left; row.enriched: a tool result was written and the row has no cell queued or running left (data holds the row).',
  },
);

const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(EventType),
  description: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});

const EXAMPLE_WEBHOOK = {
  id: EXAMPLE_IDS.webhook,
  url: 'https://hooks.example.com/workflow',
  events: ['row.enriched' as const, 'builder.completed' as const],
  description: 'CRM sync',
  created_at: '2026-11-26T09:12:00.000Z',
};

const DeliverySchema = Type.Object({
  id: Type.String({ description: 'The webhook-id header of every attempt (receivers dedupe by it).' }),
  event_type: EventType,
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
    description: 'pending: to send or retry; delivered: a 2xx answered; failed: retried for 24 h without one.',
  }),
  attempts: Type.Integer(),
  response_status: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The endpoint’s status at the last attempt (null: no answer).',
  }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed.' }),
  created_at: Type.String({ format: 'date-time' }),
  last_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  payload: Type.Unknown({ description: 'The body sent: {type, timestamp, data}.' }),
});

const EXAMPLE_DELIVERY = {
  id: EXAMPLE_IDS.delivery,
  event_type: 'builder.completed' as const,
  status: 'delivered' as const,
  attempts: 2,
  response_status: 200,
  error: null,
  created_at: '2026-11-26T09:20:01.000Z',
  last_attempt_at: '2026-11-26T09:20:06.300Z',
  next_attempt_at: null,
  delivered_at: '2026-11-26T09:20:06.300Z',
  payload: {
    type: 'builder.completed',
    timestamp: '2026-11-26T09:20:01.000Z',
    data: { project_id: EXAMPLE_IDS.project, name: 'Lyon dentists', status: 'completed', rows_created: 120, error: null },
  },
};

export const createWebhookOp = defineOperation({
  name: 'create_webhook',
  summary: 'Create a webhook',
  description: `Sends the workspace's events to a URL: builder.completed, builder.failed, column.completed, row.enriched. Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp and webhook-signature headers, HMAC-SHA256 with the secret answered here, once), are retried with backoff for 24 h while the endpoint does not answer 2xx, and are listed by list_webhook_deliveries. The URL must reach a public address. At most ${MAX_WEBHOOKS} per workspace.`,
  hint: 'write',
  method: 'POST',
  path: '/webhooks',
  body: Type.Object(
    {
      url: Type.String({ maxLength: 2048, description: 'http(s) URL that receives POSTs of JSON events.' }),
      events: Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true }),
      description: Type.Optional(Type.String({ maxLength: 500 })),
    },
    { additionalProperties: false },
  ),
  successStatus: 201,
  response: Type.Object({
    ...WebhookSchema.properties,
    secret: Type.String({ description: 'whsec_…: verifies webhook-signature (any Standard Webhooks library does). Shown once.' }),
  }),
  errors: {
    409: `The workspace holds ${MAX_WEBHOOKS} webhooks already.`,
  },
  example: {
    body: { url: EXAMPLE_WEBHOOK.url, events: EXAMPLE_WEBHOOK.events, description: EXAMPLE_WEBHOOK.description },
    response: { ...EXAMPLE_WEBHOOK, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  },
  handler: ({ kernel, workspace, body }) => createWebhook(kernel, workspace, body),
});

export const listWebhooks = defineOperation({
  name: 'list_webhooks',
  summary: 'List webhooks',
  description: 'The workspace’s webhooks (their secrets are not shown again).',
  hint: 'read',
  method: 'GET',
  path: '/webhooks',
  response: Type.Object({ webhooks: Type.Array(WebhookSchema) }),
  example: { response: { webhooks: [EXAMPLE_WEBHOOK] } },
  handler: async ({ kernel, workspace }) => ({ webhooks: (await kernel.storage.webhooks.list(workspace.id)).map(webhookView) }),
});

export const deleteWebhook = defineOperation({
  name: 'delete_webhook',
  summary: 'Delete a webhook',
  description: 'Stops sending events to the webhook’s URL and forgets its deliveries.',
  hint: 'destructive',
  method: 'DELETE',
  path: '/webhooks/{webhook_id}',
  params: WebhookIdParams,
  owned: ownWebhook,
  response: Type.Object({ deleted: Type.Literal(true) }),
  example: { params: { webhook_id: EXAMPLE_IDS.webhook }, response: { deleted: true } },
  handler: async ({ kernel, workspace, params }) => {
    await kernel.storage.webhooks.delete(workspace.id, params.webhook_id);
    return { deleted: true as const };
  },
});

export const listWebhookDeliveries = defineOperation({
  name: 'list_webhook_deliveries',
  summary: 'A webhook’s delivery log',
  description:
    'The webhook’s deliveries, newest first: each event sent, its status (pending, delivered, failed), attempts, the endpoint’s last answer and when the next attempt is due. Pass next_before to read older ones.',
  hint: 'read',
  method: 'GET',
  path: '/webhooks/{webhook_id}/deliveries',
  params: WebhookIdParams,
  owned: ownWebhook,
  query: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Deliveries per page.' })),
    before: Type.Optional(Type.String({ description: 'The next_before of the previous page.' })),
  }),
  response: Type.Object({
    deliveries: Type.Array(DeliverySchema),
    next_before: Type.Union([Type.String(), Type.Null()], { description: 'Pass as before for older deliveries; null: none.' }),
  }),
  example: {
    params: { webhook_id: EXAMPLE_IDS.webhook },
    query: { limit: 20 },
    response: { deliveries: [EXAMPLE_DELIVERY], next_before: null },
  },
  handler: async ({ kernel, params, query }) => {
    const limit = query.limit ?? 20;
    const [at, id] = (query.before ?? '').split('~');
    const before = at && id && /^\d+$/.test(at) ? { createdAt: Number(at), id } : undefined;
    const page = await kernel.storage.webhooks.deliveries(params.webhook_id, limit + 1, before);
    const shown = page.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      deliveries: shown.map(deliveryView),
      next_before: page.length > limit && last ? `${last.createdAt}~${last.id}` : null,
    };
  },
});

export const resendWebhookDelivery = defineOperation({
  name: 'resend_webhook_delivery',
  summary: 'Send a delivery again',
  description:
    'Sends a delivery again now (whatever its status), with the same webhook-id and body and a new 24-hour retry window: after fixing an endpoint, re-send what it missed.',
  hint: 'write',
  method: 'POST',
  path: '/webhooks/{webhook_id}/deliveries/{delivery_id}/resend',
  params: Type.Object({
    webhook_id: WebhookIdParams.properties.webhook_id,
    delivery_id: Type.String({ description: 'A delivery id (msg_…).' }),
  }),
  owned: ownWebhook,
  successStatus: 202,
  response: DeliverySchema,
  example: {
    params: { webhook_id: EXAMPLE_IDS.webhook, delivery_id: EXAMPLE_IDS.delivery },
    response: { ...EXAMPLE_DELIVERY, status: 'pending', next_attempt_at: '2026-11-26T10:02:00.000Z' },
  },
  handler: ({ kernel, workspace, params }) => resendDelivery(kernel, workspace, params.webhook_id, params.delivery_id),
});

export const createInboundUrlOp = defineOperation({
  name: 'create_inbound_url',
  summary: 'Make an inbound URL',
  description:
    'A URL other systems POST rows to, with no API key (the URL is the secret): a company map, {"company": {…}}, or an array of up to 1000. Input columns left out stay empty; unique keys apply; auto-run columns start. Shown once; asking again replaces it (the old URL stops working); DELETE turns it off.',
  hint: 'write',
  method: 'POST',
  path: '/projects/{project_id}/inbound',
  params: ProjectIdParams,
  project: true,
  successStatus: 201,
  response: Type.Object({ url: Type.String({ description: 'POST JSON rows here.' }), created_at: Type.String({ format: 'date-time' }) }),
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    response: {
      url: 'https://workflow.example.com/api/enterprise/inbound/in_q0bS5pV0pX1gA6yT3r9mWc2dLkE8hJ4n',
      created_at: '2026-11-26T09:30:00.000Z',
    },
  },
  handler: ({ kernel, project, keyId }) => createInboundUrl(kernel, project, keyId),
});

export const deleteInboundUrl = defineOperation({
  name: 'delete_inbound_url',
  summary: 'Turn an inbound URL off',
  description: 'The project’s inbound URL stops accepting rows (404 from then on).',
  hint: 'destructive',
  method: 'DELETE',
  path: '/projects/{project_id}/inbound',
  params: ProjectIdParams,
  project: true,
  response: Type.Object({ deleted: Type.Boolean({ description: 'false: the project had no inbound URL.' }) }),
  example: { params: { project_id: EXAMPLE_IDS.project }, response: { deleted: true } },
  handler: async ({ kernel, project }) => ({ deleted: await kernel.storage.webhooks.removeInbound(project.pk) }),
});
