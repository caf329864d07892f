import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, type DatabaseConnection, type Driver } from 'kysely';
import { BunSqliteDialect } from 'kysely-bun-sqlite';

/**
 * Transactions start with BEGIN IMMEDIATE: they take the write lock when they begin, waiting for it
 * under busy_timeout. A deferred BEGIN would take it at its first write and, finding another
 * connection (the embedded mode's job thread, another process) writing, fail at once with
 * "database is locked" — SQLite cannot wait there without risking a deadlock.
 */
class ImmediateSqliteDialect extends BunSqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

/**
 * Kysely over bun:sqlite, the embedded default: `sqlite:<path>` or `sqlite::memory:`. Creates the
 * file (and its folder) on first start.
 */
export function connectSqlite(url: string): BunSqliteDialect {
  const path = url.slice('sqlite:'.length) || ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path, { create: true, strict: true });
  // WAL lets readers proceed while one writer commits; NORMAL sync is durable across app crashes.
  database.exec('PRAGMA journal_mode = WAL');
  database.exec('PRAGMA synchronous = NORMAL');
  database.exec('PRAGMA busy_timeout = 5000');
  database.exec('PRAGMA cache_size = -65536');
  database.exec('PRAGMA temp_store = MEMORY');
  return new ImmediateSqliteDialect({ database });
}
