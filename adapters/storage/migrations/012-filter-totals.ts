import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Filtered totals every process shares (adapters/storage/rows/shared-totals.ts). Shard 0 of a
 * (project, filter) is its registration: the filter, the count and the project's change counter it
 * was counted at. Shards 1–16 hold what writers added since, each in its own record so that
 * concurrent writers to one project rarely wait on one another.
 */
export function filterTotals(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await sql`CREATE TABLE filter_totals (
        project_pk ${t.int64} NOT NULL,
        filter_key ${t.asciiKey(64)} NOT NULL,
        shard ${t.int32} NOT NULL,
        shape ${t.mediumText} NULL,
        base_version ${t.int64} NOT NULL,
        total ${t.int64} NOT NULL,
        adjusted ${t.int64} NOT NULL,
        used_at ${t.int64} NOT NULL,
        PRIMARY KEY (project_pk, filter_key, shard)
      ) ${t.clusteredTableOptions}`.execute(db);
    },
  };
}
