import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * A change counter per project beside its row count (same sharded records): every write that can
 * change what a filter matches bumps it, so a filtered total counted once can be reused until then.
 */
export function rowVersions(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('project_row_counts')
        .addColumn('v', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
