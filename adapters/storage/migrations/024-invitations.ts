import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Invitations to a workspace (Settings → Members): adding a person records one, and the person
 * joins only by accepting it from their own session. One per workspace and email.
 */
export function invitations(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('invitations')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('email', t.binaryKey(254), (c) => c.notNull())
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addColumn('invited_by', 'varchar(36)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('invitations_once', ['workspace_id', 'email'])
        .modifyEnd(t.tableOptions())
        .execute();
      await db.schema.createIndex('invitations_by_email').on('invitations').columns(['email']).execute();
    },
  };
}
