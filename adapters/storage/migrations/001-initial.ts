import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SqlDialectName } from '../database.ts';

/**
 * The initial schema. Rows live in one shared table clustered by project (docs/storage.md);
 * `cell_keys` holds one typed key per cell so filters and sorts are index range scans.
 */
export function initialSchema(dialect: SqlDialectName): Migration {
  const mysql = dialect === 'mysql';
  // InnoDB, utf8mb4 everywhere; text keys compare byte-wise (they are stored lower-cased).
  const tableOpts = mysql ? sql`ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci` : sql``;
  const bin = mysql ? sql`CHARACTER SET utf8mb4 COLLATE utf8mb4_bin` : sql``;
  const bigText = mysql ? sql`longtext` : sql`text`;

  return {
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
        .addColumn('id', mysql ? 'bigint' : 'integer', (c) =>
          mysql ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('project_id', 'varchar(36)')
        .addColumn('job_id', 'varchar(64)')
        .addColumn('note', 'varchar(255)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .modifyEnd(tableOpts)
        .execute();
      await db.schema
        .createIndex('credit_ledger_workspace')
        .on('credit_ledger')
        .columns(['workspace_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('projects')
        .addColumn('pk', mysql ? 'bigint' : 'integer', (c) =>
          mysql ? c.primaryKey().autoIncrement() : c.primaryKey(),
        )
        .addColumn('id', 'varchar(36)', (c) => c.notNull().unique())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('creator_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('name_lower', sql`varchar(255) ${bin}`, (c) => c.notNull())
        .addColumn('builder_id', 'varchar(64)')
        .addColumn('form_data', bigText)
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

      if (mysql) {
        // Clustered by project: a page of one project is a contiguous range of the primary key.
        await sql`CREATE TABLE project_rows (
          project_pk BIGINT NOT NULL,
          seq BIGINT NOT NULL,
          cells LONGTEXT NOT NULL,
          created_at BIGINT NOT NULL,
          updated_at BIGINT NOT NULL,
          deleted_at BIGINT NULL,
          PRIMARY KEY (project_pk, seq),
          KEY project_rows_live (project_pk, deleted_at, seq)
        ) ${tableOpts}`.execute(db);
        await sql`CREATE TABLE cell_keys (
          project_pk BIGINT NOT NULL,
          col_no INT NOT NULL,
          seq BIGINT NOT NULL,
          status VARCHAR(24) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
          is_empty TINYINT NOT NULL,
          num_missing TINYINT NOT NULL,
          num_key DOUBLE NULL,
          text_key VARCHAR(255) ${bin} NOT NULL,
          text_full MEDIUMTEXT ${bin} NULL,
          PRIMARY KEY (project_pk, col_no, seq),
          KEY cell_keys_num (project_pk, col_no, num_missing, num_key, seq),
          KEY cell_keys_text (project_pk, col_no, is_empty, text_key, seq)
        ) ${tableOpts}`.execute(db);
      } else {
        await sql`CREATE TABLE project_rows (
          project_pk INTEGER NOT NULL,
          seq INTEGER NOT NULL,
          cells TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          deleted_at INTEGER NULL,
          PRIMARY KEY (project_pk, seq)
        ) WITHOUT ROWID`.execute(db);
        await sql`CREATE INDEX project_rows_live ON project_rows (project_pk, deleted_at, seq)`.execute(db);
        await sql`CREATE TABLE cell_keys (
          project_pk INTEGER NOT NULL,
          col_no INTEGER NOT NULL,
          seq INTEGER NOT NULL,
          status TEXT NOT NULL,
          is_empty INTEGER NOT NULL,
          num_missing INTEGER NOT NULL,
          num_key REAL NULL,
          text_key TEXT NOT NULL,
          text_full TEXT NULL,
          PRIMARY KEY (project_pk, col_no, seq)
        ) WITHOUT ROWID`.execute(db);
        await sql`CREATE INDEX cell_keys_num ON cell_keys (project_pk, col_no, num_missing, num_key, seq)`.execute(db);
        await sql`CREATE INDEX cell_keys_text ON cell_keys (project_pk, col_no, is_empty, text_key, seq)`.execute(db);
      }

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
