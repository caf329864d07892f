import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * An outbox job stays recorded for a while after the queue took it: when (`handed_at`) and which
 * queue server took it (`handed_to`, Redis' run_id), so that a failover that lost it (Sentinel
 * promotes a replica the write had not reached yet) hands it over again (core/jobs/outbox-relay.ts).
 * The index serves the jobs not handed over yet (null first, by id: by age) and those to forget.
 */
export function outboxHanded(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('job_outbox').addColumn('handed_at', t.int64).execute();
      await db.schema.alterTable('job_outbox').addColumn('handed_to', t.asciiKey(64)).execute();
      await db.schema.createIndex('job_outbox_by_handed').on('job_outbox').columns(['handed_at', 'id']).execute();
    },
  };
}
