import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { SchemaTypes } from '../dialect.ts';

/**
 * Runs of score_icp over a project: scoring a large project is a job, and the caller follows it by
 * the run's id. The row carries the definition scored (a snapshot: editing the ICP mid-run changes
 * nothing), the tally so far and the last row scored, so a run taken over after a crash resumes.
 */
export function icpScoreRuns(t: SchemaTypes): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('icp_score_runs')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('icp_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('project_pk', 'bigint', (c) => c.notNull())
        .addColumn('project_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('col_no', 'integer')
        .addColumn('definition', 'text', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('rows_total', 'bigint', (c) => c.notNull())
        .addColumn('rows_done', 'bigint', (c) => c.notNull())
        .addColumn('after_seq', 'bigint', (c) => c.notNull())
        // Scored count, score sum and the best rows with their reasons (JSON).
        .addColumn('tally', t.mediumText, (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .modifyEnd(t.tableOptions())
        .execute();
    },
  };
}
