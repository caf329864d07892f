import { type Static, Type } from '@sinclair/typebox';

/**
 * Every job the service queues: its name, spelled `area.action`, and the schema its payload must
 * fit (a payload that does not is dead-lettered with the reason, never retried). Producers and the
 * handler table in app/service.ts take both from here.
 */

/** Runs a project's builder: pages of rows, checkpointed, resumable. */
export const BUILDER_RUN_JOB = 'builder.run';
export const BuilderRunPayload = Type.Object({ project_pk: Type.Integer({ minimum: 1 }) });

/** Fills one tool column for some rows. */
export const ENRICH_JOB = 'enrich.batch';
export const EnrichPayloadSchema = Type.Object({
  project_pk: Type.Integer({ minimum: 1 }),
  col_no: Type.Integer({ minimum: 1 }),
  seqs: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 }),
});
export type EnrichPayload = Static<typeof EnrichPayloadSchema>;

/** Scores a project's rows against an ICP. */
export const ICP_SCORE_JOB = 'icp.score';
export const IcpScorePayload = Type.Object({ run_id: Type.String({ minLength: 1 }) });

/** Turns a written enrichment batch into webhook events (row.enriched, column.completed). */
export const WEBHOOK_EVENTS_JOB = 'webhook.events';
/** The name that job had before names were spelled one way: jobs queued by an older version still run. */
export const LEGACY_WEBHOOK_EVENTS_JOB = 'webhook_events';
export const WebhookEventsPayload = Type.Object({
  project_pk: Type.Integer({ minimum: 1 }),
  col_no: Type.Integer({ minimum: 1 }),
  seqs: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1 }),
});
