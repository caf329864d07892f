import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { BunSqliteDialect } from 'kysely-bun-sqlite';

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
  return new BunSqliteDialect({ database });
}
