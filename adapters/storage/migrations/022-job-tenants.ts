import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Outbox jobs name their workspace (`tenant`), so that a job relayed after an outage is scheduled
 * fairly like any other: each queue bounds how many jobs of one workspace run at once.
 */
export function jobTenants(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('job_outbox').addColumn('tenant', 'varchar(36)').execute();
    },
  };
}
