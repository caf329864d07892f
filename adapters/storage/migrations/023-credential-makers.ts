import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * An inbound URL names the API key that made it (`key_id`), so that it stops working when that key
 * is revoked, as an export link does. URLs made before, or from a console session, name none.
 */
export function credentialMakers(): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('inbound_urls').addColumn('key_id', 'varchar(36)').execute();
    },
  };
}
