import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

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

export function widerText(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await t.widenText(db, WIDENED);
    },
  };
}
