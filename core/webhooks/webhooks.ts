import { randomBytes } from 'node:crypto';
import { ServiceError, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import { BlockedUrlError, checkedAddresses } from '../plugins/safe-fetch.ts';
import type { DeliveryRecord, WebhookRecord } from '../ports/storage.ts';
import { retryUntil, type WebhookEvent } from './events.ts';

/** Webhooks one workspace may hold. */
export const MAX_WEBHOOKS = 20;

export const webhookView = (w: WebhookRecord) => ({
  id: w.id,
  url: w.url,
  events: w.events as WebhookEvent[], // stored from the checked list
  description: w.description,
  created_at: new Date(w.createdAt).toISOString(),
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const deliveryView = (d: DeliveryRecord) => ({
  id: d.id,
  event_type: d.eventType as WebhookEvent,
  status: d.status,
  attempts: d.attempts,
  response_status: d.responseStatus,
  error: d.error,
  created_at: iso(d.createdAt) as string,
  last_attempt_at: iso(d.lastAttemptAt),
  next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
  delivered_at: iso(d.deliveredAt),
  payload: JSON.parse(d.payload) as unknown,
});

/**
 * An endpoint's URL: http(s), no credentials in it, and a host that resolves to public addresses
 * only (unless ALLOW_PRIVATE_NETWORK opens private ones), as plugins' outbound requests; every
 * delivery checks the address again (DNS may change). 422 otherwise, naming the reason.
 */
async function checkUrl(raw: string): Promise<string> {
  const bad = (message: string) => validationError(`Invalid url: ${message}`, [{ path: 'url', message }]);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('not a valid URL (e.g. https://example.com/hooks/workflow)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('must be an http or https URL');
  if (url.username || url.password) throw bad('must not carry a user name or password; put a secret in the path or query instead');
  try {
    await checkedAddresses(url.hostname, AbortSignal.timeout(5_000));
  } catch (e) {
    if (e instanceof BlockedUrlError) throw bad(e.message);
    throw bad(`${url.hostname} could not be resolved`);
  }
  // Stored as written out (non-ASCII percent-encoded), which may be longer than what was sent.
  if (url.href.length > 2048) throw bad('is longer than 2048 characters once encoded');
  return url.href;
}

/** POST /webhooks: the secret is answered here, once; deliveries are signed with it. */
export async function createWebhook(
  kernel: Kernel,
  workspace: Workspace,
  body: { url: string; events: WebhookEvent[]; description?: string },
) {
  const events = [...new Set(body.events)];
  const url = await checkUrl(body.url);
  if ((await kernel.storage.webhooks.list(workspace.id)).length >= MAX_WEBHOOKS) {
    throw new ServiceError(
      'conflict',
      `A workspace holds at most ${MAX_WEBHOOKS} webhooks; delete one (DELETE /webhooks/{webhook_id}) first`,
    );
  }
  const record: WebhookRecord = {
    id: newId(),
    workspaceId: workspace.id,
    url,
    events,
    description: body.description ?? '',
    secret: `whsec_${randomBytes(24).toString('base64')}`,
    createdAt: Date.now(),
  };
  await kernel.storage.webhooks.create(record);
  return { ...webhookView(record), secret: record.secret };
}

export async function findWebhook(kernel: Kernel, workspace: Workspace, id: string): Promise<WebhookRecord> {
  const w = await kernel.storage.webhooks.get(workspace.id, id);
  if (!w) throw new ServiceError('not_found', `Webhook ${id} not found (GET /webhooks lists this workspace's)`);
  return w;
}

/** Re-sends a delivery, whatever became of it: due now, with a new retry window, and the same `webhook-id`. */
export async function resendDelivery(kernel: Kernel, workspace: Workspace, webhookId: string, deliveryId: string) {
  await findWebhook(kernel, workspace, webhookId);
  const d = await kernel.storage.webhooks.resend(webhookId, deliveryId, Date.now(), retryUntil(kernel));
  if (!d) throw new ServiceError('not_found', `Delivery ${deliveryId} not found for this webhook`);
  return deliveryView(d);
}
