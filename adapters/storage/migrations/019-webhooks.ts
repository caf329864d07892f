import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Webhooks out and in (docs/enrichment.md):
 * - `webhooks`: a workspace's endpoints, the events each wants and the secret its deliveries are
 *   signed with (kept as is: signing needs it; it is shown once, when the webhook is created);
 * - `webhook_deliveries`: one record per event and endpoint, delivered and retried from here by
 *   whichever process claims it (`lease_until`); `dedupe_key` makes an event recorded twice (a job
 *   run again after a crash) one delivery;
 * - `inbound_urls`: a project's inbound URL, by the SHA-256 of its secret part.
 */
export function webhooks(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('url', 'varchar(2048)', (c) => c.notNull())
        .addColumn('events', 'varchar(512)', (c) => c.notNull())
        .addColumn('description', 'varchar(512)', (c) => c.notNull())
        .addColumn('secret', 'varchar(128)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('webhooks_workspace').on('webhooks').columns(['workspace_id', 'created_at']).execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('webhook_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
        .addColumn('dedupe_key', 'varchar(191)', (c) => c.notNull())
        .addColumn('payload', t.binaryText, (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('retry_until', 'bigint', (c) => c.notNull())
        .addColumn('lease_until', 'bigint', (c) => c.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('error', 'varchar(512)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_attempt_at', 'bigint')
        .addColumn('delivered_at', 'bigint')
        .modifyEnd(opts)
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_once')
        .on('webhook_deliveries')
        .columns(['webhook_id', 'dedupe_key'])
        .unique()
        .execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
      await db.schema.createIndex('webhook_deliveries_log').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
      await db.schema
        .createTable('inbound_urls')
        .addColumn('project_pk', 'bigint', (c) => c.primaryKey())
        .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
    },
  };
}
