import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Where a builder run stands (so a run taken over after a crash resumes), and its execution log. */
export function builderCheckpoints(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('projects').addColumn('builder_checkpoint', 'text').execute();
      await db.schema.alterTable('projects').addColumn('execution_log', 'text').execute();
    },
  };
}
