import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SqlDialectName } from '../database.ts';

/** Results of paid lookups, by the tool's cache key, so the same lookup is not paid twice. */
export function enrichmentCache(dialect: SqlDialectName): Migration {
  const mysql = dialect === 'mysql';
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('enrichment_cache')
        .addColumn('cache_key', mysql ? sql`varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin` : 'text', (c) => c.primaryKey())
        .addColumn('value', mysql ? sql`mediumtext` : 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .modifyEnd(mysql ? sql`ENGINE=InnoDB DEFAULT CHARSET=utf8mb4` : sql``)
        .execute();
      await db.schema.createIndex('enrichment_cache_expiry').on('enrichment_cache').column('expires_at').execute();
    },
  };
}
