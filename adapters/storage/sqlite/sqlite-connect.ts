import { Database, type SQLQueryBindings, type Statement } from 'bun:sqlite';
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
/** Prepared statements kept per connection: the hot ones of every request, never all the one-off ones. */
const STATEMENTS_KEPT = 256;

/**
 * Statements run as prepared ones kept by their SQL (least recently used dropped): the driver
 * prepared every statement afresh, an eighth of the CPU of a request on the embedded default.
 * One connection runs one statement at a time, so a kept statement is never in use twice.
 */
function statementCache(database: Database) {
  const kept = new Map<string, { statement: Statement; returnsRows: boolean }>();
  return (sql: string) => {
    let entry = kept.get(sql);
    if (entry) {
      kept.delete(sql); // to the back: most recently used
    } else {
      const statement = database.prepare(sql);
      entry = { statement, returnsRows: statement.columnNames.length > 0 };
      if (kept.size >= STATEMENTS_KEPT) {
        const [oldest, dropped] = kept.entries().next().value as [string, { statement: Statement }];
        kept.delete(oldest);
        dropped.statement.finalize();
      }
    }
    kept.set(sql, entry);
    return entry;
  };
}

class ImmediateSqliteDialect extends BunSqliteDialect {
  constructor(private readonly sqlite: { database: Database }) {
    super(sqlite);
  }

  override createDriver(): Driver {
    const prepared = statementCache(this.sqlite.database);
    const run = (query: CompiledQuery) => {
      const { statement, returnsRows } = prepared(query.sql);
      // The bindings as one array, as the driver passed them (a spread of thousands of values would not do).
      const params = query.parameters as unknown as SQLQueryBindings;
      if (returnsRows) return { rows: statement.all(params) as unknown[] };
      const result = statement.run(params);
      return { insertId: BigInt(result.lastInsertRowid), numAffectedRows: BigInt(result.changes), rows: [] };
    };
    const driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    const wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
    driver.acquireConnection = async () => {
      const inner = await acquire();
      let outer = wrapped.get(inner);
      if (!outer) {
        outer = {
          executeQuery: (query) => patiently(async () => run(query) as never),
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
