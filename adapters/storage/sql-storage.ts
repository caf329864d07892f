import { sql } from 'kysely';
import type { Storage } from '../../core/ports/storage.ts';
import { type Database, migrateToLatest, openDatabase, pendingMigrations } from './database.ts';
import { SqlIcpRepo } from './icp-repo.ts';
import { SqlIcpScoreRunRepo } from './icp-score-run-repo.ts';
import { SqlOAuthIdentityRepo } from './oauth-identity-repo.ts';
import { SqlOAuthRepo } from './oauth-repo.ts';
import { SqlEnrichmentCache } from './cache-repo.ts';
import { SqlToolStatsRepo } from './tool-stats-repo.ts';
import { SqlCreditRepo } from './credit-repo.ts';
import { SqlIdempotencyRepo } from './idempotency-repo.ts';
import { SqlJobOutboxRepo } from './job-outbox-repo.ts';
import { SqlProjectRepo } from './project-repo.ts';
import { SqlRowRepo } from './rows/sql-row-repo.ts';
import { SqlSessionRepo } from './session-repo.ts';
import { SqlUserRepo } from './user-repo.ts';
import { SqlScheduleRepo } from './schedule-repo.ts';
import { SqlUploadRepo } from './upload-repo.ts';
import { SqlWebhookRepo } from './webhook-repo.ts';
import { SqlWorkTaskRepo } from './work-task-repo.ts';
import { SqlWorkspaceRepo } from './workspace-repo.ts';

/** Storage over Kysely: the same repositories serve MySQL/MariaDB and SQLite. */
export interface SqlStorage extends Storage {
  database: Database;
}

export async function openStorage(url: string, options: { migrate?: boolean; poolSize?: number } = {}): Promise<SqlStorage> {
  const database = openDatabase(url, options);
  if (options.migrate !== false) await migrateToLatest(database);
  const credits = new SqlCreditRepo(database);
  return {
    database,
    workspaces: new SqlWorkspaceRepo(database),
    credits,
    cache: new SqlEnrichmentCache(database),
    toolStats: new SqlToolStatsRepo(database),
    idempotency: new SqlIdempotencyRepo(database),
    projects: new SqlProjectRepo(database),
    rows: new SqlRowRepo(database),
    icps: new SqlIcpRepo(database),
    icpScoreRuns: new SqlIcpScoreRunRepo(database),
    oauthIdentities: new SqlOAuthIdentityRepo(database),
    outbox: new SqlJobOutboxRepo(database),
    users: new SqlUserRepo(database),
    sessions: new SqlSessionRepo(database),
    oauth: new SqlOAuthRepo(database),
    webhooks: new SqlWebhookRepo(database),
    schedules: new SqlScheduleRepo(database),
    uploads: new SqlUploadRepo(database),
    tasks: new SqlWorkTaskRepo(database),
    ping: async () => {
      await sql`SELECT 1`.execute(database.db);
    },
    pendingMigrations: () => pendingMigrations(database),
    close: () => database.close(),
  };
}
