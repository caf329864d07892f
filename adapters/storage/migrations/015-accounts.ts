import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * People (docs/console.md): users (email stored lower-cased, argon2id password hash), their
 * role in each workspace, and server-side console sessions (only the SHA-256 of the cookie's token
 * is stored, with the session's CSRF token). API keys learn who created them and when they were
 * last used.
 */
export function accounts(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('email', t.binaryKey(254), (c) => c.notNull().unique())
        .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await db.schema
        .createTable('memberships')
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('memberships_pk', ['workspace_id', 'user_id'])
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('memberships_by_user').on('memberships').columns(['user_id']).execute();
      await db.schema
        .createTable('sessions')
        .addColumn('token_hash', 'char(64)', (c) => c.primaryKey())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('csrf_token', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('sessions_by_user').on('sessions').columns(['user_id']).execute();
      await db.schema.alterTable('api_keys').addColumn('created_by', 'varchar(36)').execute();
      await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
    },
  };
}
