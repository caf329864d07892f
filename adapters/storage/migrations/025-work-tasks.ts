import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Long work handed to a caller as a task (MCP's Tasks extension): a builder run or a column run of
 * a project, under an id the caller polls. Its state is read from the project each time; the record
 * keeps what the project cannot tell: whose task it is, what it covers, that it was cancelled, and
 * when it expires.
 */
export function workTasks(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('work_tasks')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('project_pk', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('col_ids', 'text')
        .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('cancelled_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .modifyEnd(t.tableOptions())
        .execute();
      await db.schema.createIndex('work_tasks_expiry').on('work_tasks').columns(['expires_at']).execute();
    },
  };
}
