import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * The enrichment job that holds a tool cell (`cell_keys.held_by`, its job id): the one that claimed
 * it (`running`) or queued it again for its own retry. Another job leaves it alone, so a cell runs in
 * one job at a time and is charged once (docs/decisions.md, "One job holds a tool cell"). Nullable,
 * no default: an instant ADD COLUMN on InnoDB, whatever the table's size.
 */
export function cellHolders(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('cell_keys').addColumn('held_by', t.asciiKey(36)).execute();
    },
  };
}
