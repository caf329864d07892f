import { Webhook } from 'standardwebhooks';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { safeFetch } from '../plugins/safe-fetch.ts';
import type { AttemptOutcome, DeliveryRecord, WebhookRecord } from '../storage.ts';

/** Deliveries one process sends at once, and how long its claim on them lasts. */
const BATCH = 16;
const LEASE_MS = 60_000;
const TIMEOUT_MS = 15_000;
/** What is kept of an endpoint's answer: only its status matters, and a short body helps a user see why. */
const MAX_ANSWER_BYTES = 16_384;

/** The signed headers of one attempt (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). */
export function signedHeaders(secret: string, delivery: Pick<DeliveryRecord, 'id' | 'payload'>, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'WorkflowService-Webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(delivery.id, at, delivery.payload),
  };
}

/** When to try again after `attempts` failed ones (null: the retry window is over). */
export function nextAttemptAt(kernel: Kernel, delivery: Pick<DeliveryRecord, 'retryUntil'>, attempts: number, now: number): number | null {
  const delays = kernel.config.webhooks.retryDelaysMs;
  const delay = delays[Math.min(attempts - 1, delays.length - 1)] ?? 0;
  const at = now + delay;
  return at > delivery.retryUntil ? null : at;
}

/** Sends one delivery, once; answers what it did. Any 2xx is delivered; anything else is tried again later. */
export async function attempt(kernel: Kernel, webhook: WebhookRecord, delivery: DeliveryRecord): Promise<AttemptOutcome> {
  const now = new Date();
  const failed = (responseStatus: number | null, error: string): AttemptOutcome => ({
    delivered: false,
    responseStatus,
    error,
    nextAttemptAt: nextAttemptAt(kernel, delivery, delivery.attempts + 1, Date.now()),
  });
  try {
    const res = await safeFetch(webhook.url, {
      method: 'POST',
      headers: signedHeaders(webhook.secret, delivery, now),
      body: delivery.payload,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_ANSWER_BYTES,
      // A redirect is an answer, not an invitation to send the signed event elsewhere.
      maxRedirects: 0,
    });
    if (res.status >= 200 && res.status < 300) return { delivered: true, responseStatus: res.status };
    return failed(res.status, `the endpoint answered ${res.status}${res.text() ? `: ${res.text().slice(0, 200)}` : ''}`);
  } catch (e) {
    return failed(null, (e as Error).message);
  }
}

/** Claims the deliveries due now and sends them; answers how many it sent. */
export async function dispatchDue(kernel: Kernel): Promise<number> {
  const claimed = await kernel.storage.webhooks.claimDue(Date.now(), BATCH, LEASE_MS);
  await Promise.all(
    claimed.map(async ({ webhook, delivery }) => {
      const outcome = await attempt(kernel, webhook, delivery);
      await kernel.storage.webhooks.recordAttempt(delivery.id, Date.now(), outcome);
      if (!outcome.delivered && outcome.nextAttemptAt === null) {
        // The host only: a URL's path or query often carries the endpoint's own secret.
        const host = new URL(webhook.url).host;
        log.warn('webhook delivery given up', { webhook_id: webhook.id, delivery_id: delivery.id, host, error: outcome.error });
      }
    }),
  );
  return claimed.length;
}

/**
 * Sends due deliveries every WEBHOOK_POLL_MS, in every process that runs workers. The schedule is
 * in the database, so a restart (or another process) goes on where this one stopped; a delivery
 * claimed by a process that died is claimed again once its lease is over.
 */
export function startWebhookDispatcher(kernel: Kernel): () => void {
  let busy = false;
  let stopped = false;
  const tick = async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      // A full batch means more are due: go on at once.
      while (!stopped && (await dispatchDue(kernel)) === BATCH) {}
    } catch (e) {
      log.warn('webhook deliveries could not be read', { error: (e as Error).message });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, kernel.config.webhooks.pollMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
