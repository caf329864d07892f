import { Database } from 'bun:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { CompiledQuery, type DatabaseConnection, type Driver } from 'kysely';
import { BunSqliteDialect } from 'kysely-bun-sqlite';
import { sqliteErrors } from './sqlite-errors.ts';

/** How long a statement, or a transaction's start, waits for another connection's write lock. */
const BUSY_WAIT_MS = 5_000;

/**
 * Runs a statement, waiting asynchronously while another connection holds the write lock. SQLite's
 * own wait (busy_timeout) blocks the thread: a connection holding the lock on the same thread (a
 * second storage in one process) could then never commit, and the thread that answers requests
 * would stand still meanwhile. So busy_timeout is 0 and a busy statement — which did nothing — is
 * tried again after a short sleep, until BUSY_WAIT_MS.
 */
async function patiently<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
    try {
      return await run();
    } catch (e) {
      if (!sqliteErrors.isUnavailable(e) || Date.now() >= deadline) throw e;
      await Bun.sleep(delay);
    }
  }
}

/**
 * Transactions start with BEGIN IMMEDIATE: they take the write lock when they begin. A deferred
 * BEGIN would take it at its first write and, finding another connection (the embedded mode's job
 * thread, another process) writing, fail at once with "database is locked" — SQLite cannot wait
 * there without risking a deadlock. Every statement waits for the lock as `patiently` says.
 */
class ImmediateSqliteDialect extends BunSqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
    driver.acquireConnection = async () => {
      const inner = await acquire();
      let outer = wrapped.get(inner);
      if (!outer) {
        outer = {
          executeQuery: (query) => patiently(() => inner.executeQuery(query)),
          streamQuery: (query, chunkSize) => inner.streamQuery(query, chunkSize),
        };
        wrapped.set(inner, outer);
      }
      return outer;
    };
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
  // Waits for another writer's lock are asynchronous (patiently), never SQLite's blocking one.
  database.exec('PRAGMA busy_timeout = 0');
  database.exec('PRAGMA cache_size = -65536');
  database.exec('PRAGMA temp_store = MEMORY');
  return new ImmediateSqliteDialect({ database });
}
