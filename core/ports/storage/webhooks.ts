/**
 * What a claim of due deliveries leaves to others: at most `perWebhook` in flight per endpoint and
 * `perWorkspace` per workspace, counting those already in flight (`busy`, `busyWorkspaces`).
 */
export interface DeliveryFairness {
  perWebhook: number;
  busy: Map<string, number>;
  perWorkspace: number;
  busyWorkspaces: Map<string, number>;
}

/** A workspace's endpoint for events (docs/enrichment.md, webhooks). */
export interface WebhookRecord {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  description: string;
  /** `whsec_…`: signs every delivery (Standard Webhooks). */
  secret: string;
  createdAt: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event sent (or to send) to one endpoint, and how its attempts went. */
export interface DeliveryRecord {
  /** `msg_…`: the `webhook-id` header; the same on every attempt and re-send (receivers dedupe by it). */
  id: string;
  webhookId: string;
  eventType: string;
  /** The JSON body, as signed. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  retryUntil: number;
  responseStatus: number | null;
  error: string | null;
  createdAt: number;
  lastAttemptAt: number | null;
  deliveredAt: number | null;
}

/** What one attempt did: delivered, or when to try again (none: given up). */
export type AttemptOutcome =
  | { delivered: true; responseStatus: number }
  | { delivered: false; responseStatus: number | null; error: string; nextAttemptAt: number | null };

export interface WebhookRepo {
  create(webhook: WebhookRecord): Promise<void>;
  get(workspaceId: string, id: string): Promise<WebhookRecord | undefined>;
  list(workspaceId: string): Promise<WebhookRecord[]>;
  /** Deletes the webhook and its deliveries (false: none of that id in the workspace). */
  delete(workspaceId: string, id: string): Promise<boolean>;
  /** The workspace's webhooks that want this event. */
  subscribed(workspaceId: string, eventType: string): Promise<WebhookRecord[]>;
  /** Records deliveries, due now; one whose (webhook, dedupe key) is recorded already is left out. */
  enqueue(
    deliveries: { id: string; webhookId: string; eventType: string; dedupeKey: string; payload: string }[],
    retryUntil: number,
  ): Promise<void>;
  /**
   * Claims up to `limit` due deliveries for `leaseMs` (another process claims none of them
   * meanwhile), with their webhooks, taking at most `perWebhook` of an endpoint less those
   * `busy` (webhook id → deliveries already in flight).
   */
  claimDue(
    now: number,
    limit: number,
    leaseMs: number,
    fairness?: DeliveryFairness,
  ): Promise<{ delivery: DeliveryRecord; webhook: WebhookRecord }[]>;
  /** Records an attempt's outcome and releases the lease. */
  recordAttempt(id: string, at: number, outcome: AttemptOutcome): Promise<void>;
  /** A webhook's deliveries, newest first; `before`: a created_at/id cursor of the previous page. */
  deliveries(webhookId: string, limit: number, before?: { createdAt: number; id: string }): Promise<DeliveryRecord[]>;
  getDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined>;
  /** Makes a delivery due again now, with a new retry window (a re-send); answers it as it is then. */
  resend(webhookId: string, id: string, now: number, retryUntil: number): Promise<DeliveryRecord | undefined>;
  /** The project of an inbound URL secret (its SHA-256), and the API key that made it, if any. */
  inboundProject(tokenHash: string): Promise<{ projectPk: number; keyId: string | null } | undefined>;
  /** Sets a project's inbound URL secret (SHA-256) made by this key (none: a console session), replacing any earlier one. */
  setInbound(projectPk: number, tokenHash: string, at: number, keyId?: string): Promise<void>;
  /** Turns a project's inbound URL off (false: it had none). */
  removeInbound(projectPk: number): Promise<boolean>;
}
