import { sql } from 'kysely';
import type {
  AttemptOutcome,
  DeliveryFairness,
  DeliveryRecord,
  DeliveryStatus,
  WebhookRecord,
  WebhookRepo,
} from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import type { WebhookDeliveryTable, WebhookTable } from './tables.ts';

const webhookOf = (r: WebhookTable): WebhookRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  description: r.description,
  secret: r.secret,
  createdAt: Number(r.created_at),
});

const num = (v: number | null) => (v === null ? null : Number(v));

const deliveryOf = (r: WebhookDeliveryTable): DeliveryRecord => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventType: r.event_type,
  payload: r.payload,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  nextAttemptAt: Number(r.next_attempt_at),
  retryUntil: Number(r.retry_until),
  responseStatus: num(r.response_status),
  error: r.error,
  createdAt: Number(r.created_at),
  lastAttemptAt: num(r.last_attempt_at),
  deliveredAt: num(r.delivered_at),
});

/** Webhooks, their deliveries (the retry schedule lives in the records: any process picks up where another stopped) and inbound URLs. */
export class SqlWebhookRepo implements WebhookRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(w: WebhookRecord): Promise<void> {
    await this.db
      .insertInto('webhooks')
      .values({
        id: w.id,
        workspace_id: w.workspaceId,
        url: w.url,
        events: JSON.stringify(w.events),
        description: w.description,
        secret: w.secret,
        created_at: w.createdAt,
      })
      .execute();
  }

  async get(workspaceId: string, id: string): Promise<WebhookRecord | undefined> {
    const r = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && webhookOf(r);
  }

  async list(workspaceId: string): Promise<WebhookRecord[]> {
    const rows = await this.db
      .selectFrom('webhooks')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(webhookOf);
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const gone = await tx.deleteFrom('webhooks').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) return false;
      await tx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
      return true;
    });
  }

  async subscribed(workspaceId: string, eventType: string): Promise<WebhookRecord[]> {
    // A workspace has a handful of webhooks: their event lists are read whole and matched here.
    return (await this.list(workspaceId)).filter((w) => w.events.includes(eventType));
  }

  async enqueue(
    deliveries: { id: string; webhookId: string; eventType: string; dedupeKey: string; payload: string }[],
    retryUntil: number,
  ): Promise<void> {
    if (deliveries.length === 0) return;
    const now = Date.now();
    const q = this.db.insertInto('webhook_deliveries').values(
      deliveries.map((d) => ({
        id: d.id,
        webhook_id: d.webhookId,
        event_type: d.eventType,
        dedupe_key: d.dedupeKey,
        payload: d.payload,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        retry_until: retryUntil,
        lease_until: 0,
        response_status: null,
        error: null,
        created_at: now,
        last_attempt_at: null,
        delivered_at: null,
      })),
    );
    // Recorded already (the same event told twice): the first record stands.
    await this.database.dialect.upsert(q, ['webhook_id', 'dedupe_key'], () => ({ dedupe_key: sql.ref('dedupe_key') })).execute();
  }

  async claimDue(
    now: number,
    limit: number,
    leaseMs: number,
    fairness?: DeliveryFairness,
  ): Promise<{ delivery: DeliveryRecord; webhook: WebhookRecord }[]> {
    if (limit <= 0) return [];
    const taken = new Map(fairness?.busy ?? []);
    const takenByWorkspace = new Map(fairness?.busyWorkspaces ?? []);
    const full = [...taken].filter(([, n]) => fairness && n >= fairness.perWebhook).map(([id]) => id);
    const fullWorkspaces = [...takenByWorkspace].filter(([, n]) => fairness && n >= fairness.perWorkspace).map(([id]) => id);
    let q = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id', 'd.webhook_id', 'w.workspace_id'])
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where('d.lease_until', '<', now);
    if (full.length) q = q.where('d.webhook_id', 'not in', full);
    // A workspace with its share in flight waits: its endpoints, however many, never hold every slot.
    if (fullWorkspaces.length) q = q.where('w.workspace_id', 'not in', fullWorkspaces);
    // More candidates than wanted: those of an endpoint or a workspace past its share are passed over.
    const due = await q
      .orderBy('d.next_attempt_at')
      .limit(limit * 4)
      .execute();
    const out: { delivery: DeliveryRecord; webhook: WebhookRecord }[] = [];
    for (const { id, webhook_id, workspace_id } of due) {
      if (out.length >= limit) break;
      if (fairness && (taken.get(webhook_id) ?? 0) >= fairness.perWebhook) continue;
      if (fairness && (takenByWorkspace.get(workspace_id) ?? 0) >= fairness.perWorkspace) continue;
      // One statement per delivery: of two processes claiming it, one changes the record.
      const claimed = await this.db
        .updateTable('webhook_deliveries')
        .set({ lease_until: now + leaseMs })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where('lease_until', '<', now)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) continue;
      const r = await this.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .selectAll('d')
        .select(['w.workspace_id', 'w.url', 'w.events', 'w.description', 'w.secret', 'w.created_at as webhook_created_at'])
        .where('d.id', '=', id)
        .executeTakeFirst();
      if (!r) continue; // its webhook was deleted meanwhile (and the delivery with it)
      taken.set(webhook_id, (taken.get(webhook_id) ?? 0) + 1);
      takenByWorkspace.set(workspace_id, (takenByWorkspace.get(workspace_id) ?? 0) + 1);
      out.push({
        delivery: deliveryOf(r),
        webhook: webhookOf({
          id: r.webhook_id,
          workspace_id: r.workspace_id,
          url: r.url,
          events: r.events,
          description: r.description,
          secret: r.secret,
          created_at: r.webhook_created_at,
        }),
      });
    }
    return out;
  }

  async recordAttempt(id: string, at: number, outcome: AttemptOutcome): Promise<void> {
    const status: DeliveryStatus = outcome.delivered ? 'delivered' : outcome.nextAttemptAt === null ? 'failed' : 'pending';
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        status,
        attempts: sql`attempts + 1`,
        last_attempt_at: at,
        response_status: outcome.responseStatus,
        error: outcome.delivered ? null : outcome.error.slice(0, 500),
        lease_until: 0,
        ...(outcome.delivered ? { delivered_at: at } : outcome.nextAttemptAt !== null ? { next_attempt_at: outcome.nextAttemptAt } : {}),
      })
      .where('id', '=', id)
      .execute();
  }

  async deliveries(webhookId: string, limit: number, before?: { createdAt: number; id: string }): Promise<DeliveryRecord[]> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
    if (before) {
      q = q.where((eb) =>
        eb.or([eb('created_at', '<', before.createdAt), eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)])]),
      );
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(deliveryOf);
  }

  async getDelivery(webhookId: string, id: string): Promise<DeliveryRecord | undefined> {
    const r = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r && deliveryOf(r);
  }

  async resend(webhookId: string, id: string, now: number, retryUntil: number): Promise<DeliveryRecord | undefined> {
    await this.db
      .updateTable('webhook_deliveries')
      // A new start: the retry schedule begins again from its first wait.
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, retry_until: retryUntil, lease_until: 0 })
      .where('webhook_id', '=', webhookId)
      .where('id', '=', id)
      .execute();
    return this.getDelivery(webhookId, id);
  }

  async inboundProject(tokenHash: string): Promise<{ projectPk: number; keyId: string | null } | undefined> {
    const r = await this.db
      .selectFrom('inbound_urls')
      .select(['project_pk', 'key_id'])
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return r ? { projectPk: Number(r.project_pk), keyId: r.key_id ?? null } : undefined;
  }

  async setInbound(projectPk: number, tokenHash: string, at: number, keyId?: string): Promise<void> {
    const q = this.db
      .insertInto('inbound_urls')
      .values({ project_pk: projectPk, token_hash: tokenHash, created_at: at, key_id: keyId ?? null });
    await this.database.dialect
      .upsert(q, ['project_pk'], (inserted) => ({
        token_hash: inserted('token_hash'),
        created_at: inserted('created_at'),
        key_id: inserted('key_id'),
      }))
      .execute();
  }

  async removeInbound(projectPk: number): Promise<boolean> {
    const r = await this.db.deleteFrom('inbound_urls').where('project_pk', '=', projectPk).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
