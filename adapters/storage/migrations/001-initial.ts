import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * The initial schema. Rows live in one shared table clustered by project (docs/storage.md);
 * `cell_keys` holds one typed key per cell so filters and sorts are index range scans.
 */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a migration is the record of what ran once; it is never rewritten into pieces.
export function initialSchema(t: SchemaTypes): Migration {
  const tableOpts = t.tableOptions();

  return {
    // biome-ignore lint/complexity/noExcessiveLinesPerFunction: as above, one table after another.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('workspaces')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('name', 'varchar(200)', (c) => c.notNull())
        .addColumn('plan', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(tableOpts)
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('prefix', 'varchar(32)', (c) => c.notNull().unique())
        .addColumn('key_hash', 'char(64)', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .modifyEnd(tableOpts)
        .execute();
      await db.schema.createIndex('api_keys_workspace').on('api_keys').column('workspace_id').execute();

      await db.schema
        .createTable('credit_ledger')
        .addColumn('id', t.autoId.type, t.autoId.build)
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('project_id', 'varchar(36)')
        .addColumn('job_id', 'varchar(64)')
        .addColumn('note', 'varchar(255)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(tableOpts)
        .execute();
      await db.schema.createIndex('credit_ledger_workspace').on('credit_ledger').columns(['workspace_id', 'created_at']).execute();

      await db.schema
        .createTable('projects')
        .addColumn('pk', t.autoId.type, t.autoId.build)
        .addColumn('id', 'varchar(36)', (c) => c.notNull().unique())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('creator_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        // Compared byte-wise: it is stored lower-cased.
        .addColumn('name_lower', t.binaryKey(255), (c) => c.notNull())
        .addColumn('builder_id', 'varchar(64)')
        .addColumn('form_data', t.longText)
        .addColumn('builder_status', 'varchar(16)', (c) => c.notNull())
        .addColumn('builder_error', 'text')
        .addColumn('builder_progress', 'text')
        .addColumn('next_col_no', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .modifyEnd(tableOpts)
        .execute();
      // The project list: one workspace, live projects, newest update first.
      await db.schema
        .createIndex('projects_workspace_updated')
        .on('projects')
        .columns(['workspace_id', 'deleted_at', 'updated_at', 'pk'])
        .execute();

      await db.schema
        .createTable('project_columns')
        .addColumn('project_pk', 'bigint', (c) => c.notNull())
        .addColumn('col_no', 'integer', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull().unique())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('type', 'varchar(8)', (c) => c.notNull())
        .addColumn('tool_id', 'varchar(64)')
        .addColumn('config', 'text')
        .addColumn('auto_run', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('run_condition', 'text')
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('deleted_at', 'bigint')
        .addPrimaryKeyConstraint('project_columns_pk', ['project_pk', 'col_no'])
        .modifyEnd(tableOpts)
        .execute();

      // Clustered by project: a page of one project is a contiguous range of the primary key.
      await sql`CREATE TABLE project_rows (
        project_pk ${t.int64} NOT NULL,
        seq ${t.int64} NOT NULL,
        cells ${t.longText} NOT NULL,
        created_at ${t.int64} NOT NULL,
        updated_at ${t.int64} NOT NULL,
        deleted_at ${t.int64} NULL,
        PRIMARY KEY (project_pk, seq)
      ) ${t.clusteredTableOptions}`.execute(db);
      await sql`CREATE INDEX project_rows_live ON project_rows (project_pk, deleted_at, seq)`.execute(db);
      // Text keys compare byte-wise: they are stored case-folded.
      await sql`CREATE TABLE cell_keys (
        project_pk ${t.int64} NOT NULL,
        col_no ${t.int32} NOT NULL,
        seq ${t.int64} NOT NULL,
        status ${t.asciiKey(24)} NOT NULL,
        is_empty ${t.flag} NOT NULL,
        num_missing ${t.flag} NOT NULL,
        num_key ${t.float64} NULL,
        text_key ${t.binaryKey(255)} NOT NULL,
        text_full ${t.binaryText} NULL,
        PRIMARY KEY (project_pk, col_no, seq)
      ) ${t.clusteredTableOptions}`.execute(db);
      await sql`CREATE INDEX cell_keys_num ON cell_keys (project_pk, col_no, num_missing, num_key, seq)`.execute(db);
      await sql`CREATE INDEX cell_keys_text ON cell_keys (project_pk, col_no, is_empty, text_key, seq)`.execute(db);

      await db.schema
        .createTable('project_row_counts')
        .addColumn('project_pk', 'bigint', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('project_row_counts_pk', ['project_pk', 'shard'])
        .modifyEnd(tableOpts)
        .execute();

      await db.schema
        .createTable('id_sequences')
        .addColumn('name', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('next_value', 'bigint', (c) => c.notNull())
        .modifyEnd(tableOpts)
        .execute();
      await db.insertInto('id_sequences').values({ name: 'row_seq', next_value: 1 }).execute();
    },
  };
}
