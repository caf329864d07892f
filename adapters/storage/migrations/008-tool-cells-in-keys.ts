import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Tool cells keep their value and error beside their key (`cell`, JSON `{v, e}`), not in the row
 * document: writing a batch of results is then one upsert of narrow records, with no rewrite of
 * whole rows (the dominant cost of filling a column).
 */
export function toolCellsInKeys(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('cell_keys').addColumn('cell', t.mediumText).execute();
    },
  };
}
