import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Schedules (docs/enrichment.md): a project's cron expression and time zone, and the next
 * time its builder runs again. Claiming a due schedule moves `next_run_at` on in the same
 * statement, so of several processes one starts each run, and a restart finds the schedule as it was.
 */
export function schedules(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('schedules')
        .addColumn('project_pk', 'bigint', (c) => c.primaryKey())
        .addColumn('cron', 'varchar(128)', (c) => c.notNull())
        .addColumn('timezone', 'varchar(64)', (c) => c.notNull())
        .addColumn('next_run_at', 'bigint', (c) => c.notNull())
        .addColumn('last_run_at', 'bigint')
        .addColumn('last_outcome', 'varchar(255)')
        // The API key that set the schedule: its runs spend under that key's monthly cap.
        .addColumn('key_id', 'varchar(36)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(t.tableOptions())
        .execute();
      await db.schema.createIndex('schedules_due').on('schedules').column('next_run_at').execute();
    },
  };
}
