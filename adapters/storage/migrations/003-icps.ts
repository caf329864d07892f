import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * ICPs (workspace-level Ideal Customer Profiles, the definition as JSON text) and the OAuth
 * identities that map a token's (issuer, subject) to a workspace for the MCP host.
 */
export function icpsAndOAuthIdentities(t: SchemaTypes): Migration {
  const tableOpts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('icps')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .modifyEnd(tableOpts)
        .execute();
      await db.schema.createIndex('icps_workspace').on('icps').columns(['workspace_id', 'created_at']).execute();

      await db.schema
        .createTable('oauth_identities')
        .addColumn('issuer', 'varchar(255)', (c) => c.notNull())
        .addColumn('subject', 'varchar(255)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('oauth_identities_pk', ['issuer', 'subject'])
        .modifyEnd(tableOpts)
        .execute();
    },
  };
}
