import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely } from 'kysely';
import { BunSqliteDialect } from 'kysely-bun-sqlite';
import type { Tables } from '../tables.ts';

/** Kysely over bun:sqlite: the embedded default. Creates the file (and its folder) on first start. */
export function connectSqlite(path: string): Kysely<Tables> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path, { create: true, strict: true });
  // WAL lets readers proceed while one writer commits; NORMAL sync is durable across app crashes.
  database.exec('PRAGMA journal_mode = WAL');
  database.exec('PRAGMA synchronous = NORMAL');
  database.exec('PRAGMA busy_timeout = 5000');
  database.exec('PRAGMA cache_size = -65536');
  database.exec('PRAGMA temp_store = MEMORY');
  return new Kysely<Tables>({ dialect: new BunSqliteDialect({ database }) });
}
