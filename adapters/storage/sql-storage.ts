import { sql } from 'kysely';
import type { Storage } from '../../core/storage.ts';
import { type Database, migrateToLatest, openDatabase } from './database.ts';
import { SqlProjectRepo } from './project-repo.ts';
import { SqlRowRepo } from './row-repo.ts';
import { SqlWorkspaceRepo } from './workspace-repo.ts';

/** Storage over Kysely: the same repositories serve MySQL/MariaDB and SQLite. */
export interface SqlStorage extends Storage {
  database: Database;
}

export async function openStorage(url: string, options: { migrate?: boolean; poolSize?: number } = {}): Promise<SqlStorage> {
  const database = openDatabase(url, options);
  if (options.migrate !== false) await migrateToLatest(database);
  return {
    database,
    workspaces: new SqlWorkspaceRepo(database),
    projects: new SqlProjectRepo(database),
    rows: new SqlRowRepo(database),
    ping: async () => {
      await sql`SELECT 1`.execute(database.db);
    },
    close: () => database.close(),
  };
}
