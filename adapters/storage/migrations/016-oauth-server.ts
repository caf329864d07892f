import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * The built-in OAuth 2.1 authorization server (docs/oauth.md): registered clients (a
 * secret only as its SHA-256), authorization codes (SHA-256, single use, 60 s), grants (one per
 * connected client of a person in a workspace: what the console lists and revokes), their refresh
 * tokens (SHA-256, rotated; a reused one revokes its grant) and the keys access tokens are signed with.
 * Client ids are URLs for Client ID Metadata Documents, hence ASCII keys of 512 characters.
 */
export function oauthServer(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('oauth_clients')
        .addColumn('client_id', t.asciiKey(512), (c) => c.primaryKey())
        .addColumn('secret_hash', 'char(64)')
        .addColumn('client_name', 'varchar(255)', (c) => c.notNull())
        .addColumn('redirect_uris', 'text', (c) => c.notNull())
        .addColumn('auth_method', 'varchar(32)', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(opts)
        .execute();
      await db.schema
        .createTable('oauth_codes')
        .addColumn('code_hash', 'char(64)', (c) => c.primaryKey())
        .addColumn('client_id', t.asciiKey(512), (c) => c.notNull())
        .addColumn('client_name', 'varchar(255)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'varchar(128)', (c) => c.notNull())
        .addColumn('resource', 'varchar(512)', (c) => c.notNull())
        .addColumn('scope', 'varchar(255)', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('grant_id', 'varchar(36)')
        .addColumn('replayed_at', 'bigint')
        .modifyEnd(opts)
        .execute();
      await db.schema
        .createTable('oauth_grants')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('client_id', t.asciiKey(512), (c) => c.notNull())
        .addColumn('client_name', 'varchar(255)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('resource', 'varchar(512)', (c) => c.notNull())
        .addColumn('scope', 'varchar(255)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('oauth_grants_by_user').on('oauth_grants').columns(['user_id', 'workspace_id']).execute();
      await db.schema
        .createTable('oauth_refresh_tokens')
        .addColumn('token_hash', 'char(64)', (c) => c.primaryKey())
        .addColumn('grant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('oauth_refresh_by_grant').on('oauth_refresh_tokens').columns(['grant_id']).execute();
      await db.schema
        .createTable('oauth_signing_keys')
        .addColumn('kid', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('alg', 'varchar(16)', (c) => c.notNull())
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('retired_at', 'bigint')
        .modifyEnd(opts)
        .execute();
    },
  };
}
