import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Credits: the ledger gains what each entry belongs to and an idempotency key (a redelivered job
 * never charges twice); `credit_balances` holds the running sum, updated in the same transaction
 * as each entry, so "balance >= cost" is one atomic conditional update. Also the stored answers of
 * idempotent POSTs, and the per-row credit cap of waterfall columns.
 */
export function credits(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      for (const [name, type] of [
        ['column_id', 'varchar(36)'],
        ['row_id', 'varchar(32)'],
        ['plugin_id', 'varchar(64)'],
        ['idem_key', 'varchar(191)'],
      ] as const) {
        await db.schema.alterTable('credit_ledger').addColumn(name, type).execute();
      }
      await db.schema.createIndex('credit_ledger_idem').on('credit_ledger').column('idem_key').unique().execute();
      await db.schema.createIndex('credit_ledger_project').on('credit_ledger').columns(['project_id', 'kind']).execute();

      await db.schema
        .createTable('credit_balances')
        .addColumn('workspace_id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('balance', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await sql`INSERT INTO credit_balances (workspace_id, balance)
        SELECT workspace_id, SUM(amount) FROM credit_ledger GROUP BY workspace_id`.execute(db);

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('idem_key', 'varchar(191)', (c) => c.notNull())
        .addColumn('operation', 'varchar(64)', (c) => c.notNull())
        .addColumn('request_hash', 'char(64)', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('response', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'idem_key'])
        .modifyEnd(opts)
        .execute();

      await db.schema.alterTable('project_columns').addColumn('max_credits_per_row', 'integer').execute();
    },
  };
}
