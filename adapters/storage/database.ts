import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { log, redactUrl } from '../../core/log.ts';
import type { StorageDialect } from './dialect.ts';
import { migrationProvider } from './migrations/index.ts';
import { mysqlDialect } from './mysql/mysql-dialect.ts';
import { sqliteDialect } from './sqlite/sqlite-dialect.ts';
import type { Tables } from './tables.ts';
import { withFailover } from './failover-driver.ts';
import { RetryingKysely } from './retrying-kysely.ts';

/** The databases `DATABASE_URL` may name; each one is a folder beside this file. */
const DIALECTS: readonly StorageDialect[] = [mysqlDialect, sqliteDialect];

/** An open database: the Kysely handle plus its dialect, which answers whatever differs between databases. */
export interface Database {
  db: Kysely<Tables>;
  dialect: StorageDialect;
  close(): Promise<void>;
}

/**
 * Opens `DATABASE_URL`: `mysql://user:pass@host:port/db` (several `host:port` separated by commas for
 * the nodes of a Galera cluster), `sqlite:<path>` or `sqlite::memory:`.
 */
export function openDatabase(url: string, options: { poolSize?: number } = {}): Database {
  const dialect = DIALECTS.find((d) => d.schemes.some((s) => url.startsWith(s)));
  if (!dialect) {
    const schemes = DIALECTS.flatMap((d) => d.schemes);
    throw new Error(`DATABASE_URL must start with ${schemes.slice(0, -1).join(', ')} or ${schemes.at(-1)}, got "${redactUrl(url)}"`);
  }
  const db = new RetryingKysely<Tables>({ dialect: withFailover(dialect.connect(url, options), dialect.errors) }, dialect.errors);
  return { db, dialect, close: () => db.destroy() };
}

/** Whether a second connection to `DATABASE_URL` (the job thread's) sees the same database. */
export function sharedByConnections(url: string): boolean {
  return DIALECTS.find((d) => d.schemes.some((s) => url.startsWith(s)))?.sharedByConnections(url) ?? false;
}

function migratorOf(database: Database): Migrator {
  return new Migrator({
    db: database.db,
    provider: migrationProvider(database.dialect.schema),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
}

/** Names of the migrations this code knows that the database has not applied (a readiness check). */
export async function pendingMigrations(database: Database): Promise<string[]> {
  const migrations = await migratorOf(database).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Brings the schema up to date; run on every start (it is a no-op when nothing is pending). */
export async function migrateToLatest(database: Database): Promise<void> {
  const migrator = migratorOf(database);
  const { error, results } = await migrator.migrateToLatest();
  for (const r of results ?? []) {
    if (r.status === 'Success') log.info('migration applied', { migration: r.migrationName });
    if (r.status === 'Error') log.error('migration failed', { migration: r.migrationName });
  }
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
