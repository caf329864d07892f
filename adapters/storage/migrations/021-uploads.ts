import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Uploaded files (a CSV of any size, POST /projects/import.csv): stored as text in parts of about
 * a megabyte, written as the upload streams in and read back the same way by the builder run, on
 * whichever process runs it. `head` keeps the file's start (its header, for the project's columns).
 * An upload is deleted once the run that imports it has ended.
 */
export function uploads(t: SchemaTypes): Migration {
  const opts = t.tableOptions();
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('uploads')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('parts', 'integer', (c) => c.notNull())
        .addColumn('head', t.binaryText, (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        // The project that imports it, once made.
        .addColumn('project_id', 'varchar(36)')
        .modifyEnd(opts)
        .execute();
      await db.schema.createIndex('uploads_created').on('uploads').column('created_at').execute();
      await db.schema
        .createTable('upload_parts')
        .addColumn('upload_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('part_no', 'integer', (c) => c.notNull())
        .addColumn('text', t.binaryText, (c) => c.notNull())
        .addPrimaryKeyConstraint('upload_parts_pk', ['upload_id', 'part_no'])
        .modifyEnd(opts)
        .execute();
    },
  };
}
