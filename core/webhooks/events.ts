import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';

/** What a webhook may ask to be told (docs/enrichment.md). */
export const WEBHOOK_EVENTS = ['builder.completed', 'builder.failed', 'column.completed', 'row.enriched'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** A delivery's `webhook-id`: one per event and endpoint, kept by every attempt and re-send. */
const newMessageId = () => `msg_${newId().replaceAll('-', '')}`;

/** When a delivery recorded now stops being retried. */
export const retryUntil = (kernel: Kernel, from = Date.now()) => from + kernel.config.webhooks.retryWindowMs;

/**
 * Records an event for each of the workspace's webhooks that want it, to be delivered by the
 * dispatcher. `dedupeKey` names the event itself: recording it again (work run twice after a
 * crash) adds no delivery. The body follows Standard Webhooks: `{type, timestamp, data}`.
 */
export async function recordEvent(
  kernel: Kernel,
  workspaceId: string,
  type: WebhookEvent,
  dedupeKey: string,
  data: Record<string, unknown>,
): Promise<void> {
  await recordEvents(kernel, workspaceId, type, [{ dedupeKey, data }]);
}

/** Several events of one type, recorded in one write. */
export async function recordEvents(
  kernel: Kernel,
  workspaceId: string,
  type: WebhookEvent,
  events: { dedupeKey: string; data: Record<string, unknown> }[],
): Promise<void> {
  if (events.length === 0) return;
  const hooks = await kernel.storage.webhooks.subscribed(workspaceId, type);
  if (hooks.length === 0) return;
  const timestamp = new Date().toISOString();
  const deliveries = events.flatMap((e) => {
    const payload = JSON.stringify({ type, timestamp, data: e.data });
    const dedupeKey = `${type}:${e.dedupeKey}`.slice(0, 191);
    return hooks.map((w) => ({ id: newMessageId(), webhookId: w.id, eventType: type, dedupeKey, payload }));
  });
  await kernel.storage.webhooks.enqueue(deliveries, retryUntil(kernel));
}

/** recordEvent for work that must go on whatever happens to the notification (a builder run ending). */
export async function tellWebhooks(...args: Parameters<typeof recordEvent>): Promise<void> {
  try {
    await recordEvent(...args);
  } catch (e) {
    log.warn('a webhook event could not be recorded', { event: args[2], workspace_id: args[1], error: (e as Error).message });
  }
}
