import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Unique keys (docs/enrichment.md): a project's settings (JSON: its unique columns and what an
 * insert of an existing key does), and one record per live row of such a project holding the
 * SHA-256 of its normalised key. The primary key is the uniqueness: two concurrent inserts of one
 * key cannot both commit.
 */
export function uniqueKeys(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('projects').addColumn('settings', 'text').execute();
      await db.schema
        .createTable('row_keys')
        .addColumn('project_pk', 'bigint', (c) => c.notNull())
        .addColumn('key_hash', 'char(64)', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('row_keys_pk', ['project_pk', 'key_hash'])
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('row_keys_seq').on('row_keys').columns(['project_pk', 'seq']).execute();
    },
  };
}
