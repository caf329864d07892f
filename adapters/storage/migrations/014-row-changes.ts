import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * What each row write did, one record per write, written by the write's transaction
 * (adapters/storage/rows/row-changes.ts): a process that remembers deep-page anchors of a listing
 * reads the writes made since, by any process, and keeps the anchors those writes cannot have
 * moved. `kind`: 1 insert (rows `first_seq` .. + `row_count` − 1), 2 delete, 3 values (and
 * statuses) of column `col_no`, 4 statuses only. Recent records only: older ones are pruned.
 */
export function rowChanges(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('row_changes')
        .addColumn('id', t.autoId.type, t.autoId.build)
        .addColumn('project_pk', t.int64, (c) => c.notNull())
        .addColumn('kind', t.int32, (c) => c.notNull())
        .addColumn('first_seq', t.int64)
        .addColumn('row_count', t.int32)
        .addColumn('col_no', t.int32)
        .modifyEnd(t.tableOptions())
        .execute();
      await db.schema.createIndex('row_changes_by_project').on('row_changes').columns(['project_pk', 'id']).execute();
    },
  };
}
