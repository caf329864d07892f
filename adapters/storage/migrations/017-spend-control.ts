import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Spend control and self-tuning waterfalls (../shared/DESIGN.md §12): run budgets (a run's
 * `max_credits`, taken from as its cells are charged and given back by refunds), a monthly credit cap
 * per API key (its ledger entries carry the key, indexed by time for the month's sum), when each
 * cached result was fetched (provenance), and per workspace and tool the figures of every run (attempts, results found, net credits, time spent).
 */
export function spendControl(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('run_budgets')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('cap', 'bigint', (c) => c.notNull())
        .addColumn('spent', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await db.schema.alterTable('api_keys').addColumn('monthly_credits', 'bigint').execute();
      await db.schema.alterTable('credit_ledger').addColumn('key_id', 'varchar(36)').execute();
      await db.schema.createIndex('credit_ledger_key').on('credit_ledger').columns(['key_id', 'created_at']).execute();
      // What each key spent per calendar month, kept with every entry that carries the key: the cap is
      // checked against one row, not a sum over the month's entries.
      await db.schema
        .createTable('key_months')
        .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('month', 'char(7)', (c) => c.notNull())
        .addColumn('spent', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('key_months_pk', ['key_id', 'month'])
        .modifyEnd(opts)
        .execute();
      await db.schema.alterTable('project_columns').addColumn('step_order', 'varchar(16)').execute();
      // When a cached result was found: its cells' provenance, and reuse bounded by ENRICHMENT_CACHE_TTL_S.
      await db.schema.alterTable('enrichment_cache').addColumn('fetched_at', 'bigint').execute();
      await db.schema
        .createTable('tool_stats')
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('tool_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('attempts', 'bigint', (c) => c.notNull())
        .addColumn('found', 'bigint', (c) => c.notNull())
        .addColumn('credits', 'bigint', (c) => c.notNull())
        .addColumn('latency_ms', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('tool_stats_pk', ['workspace_id', 'tool_id'])
        .modifyEnd(opts)
        .execute();
    },
  };
}
