import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { log, redactUrl } from '../../core/log.ts';
import { migrationProvider } from './migrations/index.ts';
import { connectMysql } from './mysql/mysql-connect.ts';
import { connectSqlite } from './sqlite/sqlite-connect.ts';
import type { Tables } from './tables.ts';

export type SqlDialectName = 'mysql' | 'sqlite';

/** An open database: the Kysely handle plus the dialect, which a few queries need to know. */
export interface Database {
  db: Kysely<Tables>;
  dialect: SqlDialectName;
  close(): Promise<void>;
}

/** DATABASE_POOL_SIZE: connections per process to MySQL (default 32, one per concurrent request under load). */
function poolSizeFromEnv(): number {
  const n = Number(process.env.DATABASE_POOL_SIZE ?? 32);
  if (!Number.isInteger(n) || n < 1) throw new Error(`DATABASE_POOL_SIZE must be an integer >= 1, got "${process.env.DATABASE_POOL_SIZE}"`);
  return n;
}

/** Opens `DATABASE_URL`: `mysql://user:pass@host:port/db`, `sqlite:<path>` or `sqlite::memory:`. */
export function openDatabase(url: string, options: { poolSize?: number } = {}): Database {
  let db: Kysely<Tables>;
  let dialect: SqlDialectName;
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    dialect = 'mysql';
    db = connectMysql(url.replace(/^mariadb:/, 'mysql:'), options.poolSize ?? poolSizeFromEnv());
  } else if (url.startsWith('sqlite:')) {
    dialect = 'sqlite';
    db = connectSqlite(url.slice('sqlite:'.length) || ':memory:');
  } else {
    throw new Error(`DATABASE_URL must start with mysql:// or sqlite:, got "${redactUrl(url)}"`);
  }
  return { db, dialect, close: () => db.destroy() };
}

/** Brings the schema up to date; run on every start (it is a no-op when nothing is pending). */
export async function migrateToLatest(database: Database): Promise<void> {
  const migrator = new Migrator({
    db: database.db,
    provider: migrationProvider(database.dialect),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  for (const r of results ?? []) {
    if (r.status === 'Success') log.info('migration applied', { migration: r.migrationName });
    if (r.status === 'Error') log.error('migration failed', { migration: r.migrationName });
  }
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
