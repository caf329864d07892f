import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Spend control and self-tuning waterfalls (docs/enrichment.md):
 * - `runs`: what a call that queued cells allows them (its `max_credits`, taken from as they are
 *   charged and given back by refunds, and the API key it came with); each queued tool cell names
 *   its run (`cell_keys.run_id`), so whichever job, follow-up or resume runs it spends as its caller allowed;
 * - a monthly credit cap per API key, the key on each ledger entry and a per-key monthly total;
 * - when each cached result was found (provenance), and the waterfall order of a column;
 * - per workspace and tool, the figures of every run (attempts, results found, net credits, time).
 */
export function spendControl(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('runs')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('cap', 'bigint')
        .addColumn('spent', 'bigint', (c) => c.notNull())
        .addColumn('key_id', 'varchar(36)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('runs_created').on('runs').column('created_at').execute();
      // Nullable, no default: an instant ADD COLUMN on InnoDB, whatever the table's size.
      await db.schema.alterTable('cell_keys').addColumn('run_id', 'varchar(36)').execute();
      await db.schema.alterTable('api_keys').addColumn('monthly_credits', 'bigint').execute();
      await db.schema.alterTable('credit_ledger').addColumn('key_id', 'varchar(36)').execute();
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
      // Kept results found before: at the latest their expiry less the longest TTL (30 days), so none looks fresher than it is.
      await sql`UPDATE enrichment_cache SET fetched_at = expires_at - 2592000000`.execute(db);
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
