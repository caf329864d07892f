import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/** Results of paid lookups, by the tool's cache key, so the same lookup is not paid twice. */
export function enrichmentCache(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('enrichment_cache')
        .addColumn('cache_key', t.binaryKey(255), (c) => c.primaryKey())
        .addColumn('value', t.mediumText, (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .modifyEnd(t.tableOptions('charset default'))
        .execute();
      await db.schema.createIndex('enrichment_cache_expiry').on('enrichment_cache').column('expires_at').execute();
    },
  };
}
