import { Webhook } from 'standardwebhooks';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { safeFetch } from '../plugins/safe-fetch.ts';
import type { AttemptOutcome, DeliveryRecord, WebhookRecord } from '../ports/storage.ts';

/** Deliveries one process sends at once, to one endpoint at once, for one workspace at once, and how long a claim lasts. */
const BATCH = 16;
const PER_WEBHOOK = 2;
/** A workspace's endpoints, however many and however slow, hold at most a quarter of the slots. */
const PER_WORKSPACE = 4;
const LEASE_MS = 60_000;
const TIMEOUT_MS = 15_000;
/** What is read of an endpoint's answer: only its status matters, and a short body helps a user see why. */
const MAX_ANSWER_BYTES = 4_096;

/** The signed headers of one attempt (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). */
function signedHeaders(secret: string, delivery: Pick<DeliveryRecord, 'id' | 'payload'>, at: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'WorkflowService-Webhooks/1',
    'webhook-id': delivery.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(delivery.id, at, delivery.payload),
  };
}

/**
 * When to try again after `attempts` failed ones: the schedule's next wait, or — when that would
 * pass the end of the retry window — one last attempt at its end; null once the window is over.
 */
export function nextAttemptAt(kernel: Kernel, delivery: Pick<DeliveryRecord, 'retryUntil'>, attempts: number, now: number): number | null {
  const delays = kernel.config.webhooks.retryDelaysMs;
  const delay = delays[Math.min(attempts - 1, delays.length - 1)] ?? 0;
  if (now >= delivery.retryUntil) return null;
  return Math.min(now + delay, delivery.retryUntil);
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
      pastMaxBytes: 'cut', // a 2xx with a long body is delivered, not sent again
      // A redirect is an answer, not an invitation to send the signed event elsewhere.
      maxRedirects: 0,
    });
    if (res.status >= 200 && res.status < 300) return { delivered: true, responseStatus: res.status };
    return failed(res.status, `the endpoint answered ${res.status}${res.text() ? `: ${res.text().slice(0, 200)}` : ''}`);
  } catch (e) {
    return failed(null, (e as Error).message);
  }
}

/**
 * Sends due deliveries, in every process that runs jobs: every WEBHOOK_POLL_MS it claims what is
 * due, up to BATCH in flight, at most PER_WEBHOOK per endpoint and PER_WORKSPACE per workspace — so
 * one slow or dead endpoint holds two slots, and a workspace of twenty of them four, never the
 * whole process. The schedule is in the database: a restart (or another process)
 * goes on where this one stopped, and a delivery claimed by a process that died is claimed again
 * once its lease is over.
 */
export function startWebhookDispatcher(kernel: Kernel): () => void {
  const perWebhook = new Map<string, number>();
  const perWorkspace = new Map<string, number>();
  const less = (counts: Map<string, number>, key: string) => {
    const n = (counts.get(key) ?? 1) - 1;
    if (n > 0) counts.set(key, n);
    else counts.delete(key);
  };
  let inFlight = 0;
  let claiming = false;
  let stopped = false;
  const send = async ({ webhook, delivery }: { webhook: WebhookRecord; delivery: DeliveryRecord }) => {
    try {
      const outcome = await attempt(kernel, webhook, delivery);
      await kernel.storage.webhooks.recordAttempt(delivery.id, Date.now(), outcome);
      if (!outcome.delivered && outcome.nextAttemptAt === null) {
        // The host only: a URL's path or query often carries the endpoint's own secret.
        const host = new URL(webhook.url).host;
        log.warn('webhook delivery given up', { webhook_id: webhook.id, delivery_id: delivery.id, host, error: outcome.error });
      }
    } catch (e) {
      log.warn('a webhook attempt could not be recorded (its lease ends, then it is tried again)', { error: (e as Error).message });
    } finally {
      inFlight--;
      less(perWebhook, webhook.id);
      less(perWorkspace, webhook.workspaceId);
    }
  };
  const tick = async () => {
    if (claiming || stopped || inFlight >= BATCH) return;
    claiming = true;
    try {
      const claimed = await kernel.storage.webhooks.claimDue(Date.now(), BATCH - inFlight, LEASE_MS, {
        perWebhook: PER_WEBHOOK,
        busy: perWebhook,
        perWorkspace: PER_WORKSPACE,
        busyWorkspaces: perWorkspace,
      });
      for (const c of claimed) {
        inFlight++;
        perWebhook.set(c.webhook.id, (perWebhook.get(c.webhook.id) ?? 0) + 1);
        perWorkspace.set(c.webhook.workspaceId, (perWorkspace.get(c.webhook.workspaceId) ?? 0) + 1);
        void send(c);
      }
    } catch (e) {
      log.warn('webhook deliveries could not be read', { error: (e as Error).message });
    } finally {
      claiming = false;
    }
  };
  const timer = setInterval(tick, kernel.config.webhooks.pollMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
