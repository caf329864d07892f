import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SqlDialectName } from '../database.ts';

/**
 * Fields a tenant fills (column configs, run conditions, waterfalls, saved filters, ICP definitions)
 * and the run state written from them were MySQL `TEXT`, whose 65,535-byte cap turned a large but
 * valid value into a raw driver error on MariaDB while SQLite took it. They become `MEDIUMTEXT`;
 * the API bounds what goes in (see core/rows/cell-limits.ts and the operation schemas).
 */
const WIDENED: Record<string, string[]> = {
  projects: ['builder_error', 'builder_progress', 'saved_filters', 'builder_checkpoint', 'execution_log'],
  project_columns: ['config', 'run_condition', 'waterfall'],
  icps: ['definition'],
  idempotency_keys: ['response'],
};

export function widerText(dialect: SqlDialectName): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect !== 'mysql') return; // SQLite's TEXT has no such cap
      for (const [table, columns] of Object.entries(WIDENED)) {
        const { rows } = await sql<{ COLUMN_NAME: string; IS_NULLABLE: string }>`
          SELECT COLUMN_NAME, IS_NULLABLE FROM information_schema.COLUMNS
          WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table}`.execute(db);
        const nullable = new Map(rows.map((r) => [r.COLUMN_NAME, r.IS_NULLABLE === 'YES']));
        for (const column of columns) {
          if (!nullable.has(column)) continue;
          const modify = nullable.get(column) ? sql`MEDIUMTEXT NULL` : sql`MEDIUMTEXT NOT NULL`;
          await sql`ALTER TABLE ${sql.table(table)} MODIFY ${sql.ref(column)} ${modify}`.execute(db);
        }
      }
    },
  };
}
