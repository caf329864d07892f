import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Jobs a write starts, stored by the write's own transaction (adapters/storage/job-outbox-repo.ts):
 * with Redis away the work is accepted and relayed once Redis is back. The id is a UUID v7, so the
 * primary key orders the outbox by age.
 */
export function jobOutbox(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await sql`CREATE TABLE job_outbox (
        id ${t.asciiKey(36)} NOT NULL PRIMARY KEY,
        type ${t.asciiKey(64)} NOT NULL,
        payload ${t.mediumText} NOT NULL,
        created_at ${t.int64} NOT NULL
      ) ${t.clusteredTableOptions}`.execute(db);
    },
  };
}
