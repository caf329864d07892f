import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Waterfall steps of tool columns, and each project's saved filter groups. */
export function columnsAndFilters(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('project_columns').addColumn('waterfall', 'text').execute();
      await db.schema.alterTable('projects').addColumn('saved_filters', 'text').execute();
    },
  };
}
