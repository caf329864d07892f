import type { CompiledQuery, DatabaseConnection, Driver, Dialect as KyselyDialect, QueryResult, TransactionSettings } from 'kysely';
import { StoreUnavailableError } from '../../core/errors.ts';
import type { DialectErrors } from './dialect.ts';
import { markOutcomeUnknown, redoing, statementRedoable } from './redo-policy.ts';

type Rethrow = (e: unknown) => never;

/**
 * Kysely's dialect with what the service needs of a driver on a database that may fail under it:
 * - a statement outside a transaction that the database refused unrun, lost to a conflict, or lost
 *   with its connection while only reading runs again on a fresh connection (on a cluster, another
 *   node), with redo-policy.ts's backoff; whole transactions are retrying-kysely.ts's;
 * - a commit whose connection broke is marked "outcome unknown", so the transaction is not redone;
 * - a rollback on a connection that broke is not an error: the server rolls back by itself;
 * - the driver's "database away" errors (as the storage dialect tells them) are thrown as core's
 *   StoreUnavailableError, so the kernel answers 503 and retries without knowing any driver's codes.
 * Every other error passes through untouched.
 */
export function withFailover(inner: KyselyDialect, errors: DialectErrors): KyselyDialect {
  const rethrow: Rethrow = (e) => {
    if (!errors.isUnavailable(e)) throw e;
    throw new StoreUnavailableError(e instanceof Error ? e.message : String(e), { cause: e });
  };
  return {
    createAdapter: () => inner.createAdapter(),
    createDriver: () => new FailoverDriver(inner.createDriver(), errors, rethrow),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
  };
}

class FailoverDriver implements Driver {
  constructor(
    private readonly driver: Driver,
    private readonly errors: DialectErrors,
    private readonly rethrow: Rethrow,
  ) {}

  init(): Promise<void> {
    return this.driver.init().catch(this.rethrow);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new FailoverConnection(await this.driver.acquireConnection().catch(this.rethrow), this.driver, this.errors, this.rethrow);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as FailoverConnection;
    c.inTransaction = true;
    return this.driver.beginTransaction(c.current(), settings).catch(this.rethrow);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as FailoverConnection;
    try {
      await this.driver.commitTransaction(c.current());
    } catch (e) {
      if (this.errors.isConnectionLost(e)) markOutcomeUnknown(e);
      this.rethrow(e);
    } finally {
      c.inTransaction = false;
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as FailoverConnection;
    try {
      await this.driver.rollbackTransaction(c.current());
    } catch (e) {
      // A broken connection ended its transaction on the server: the error that broke it is the one to tell.
      if (!this.errors.isUnavailable(e)) throw e;
    } finally {
      c.inTransaction = false;
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const inner = (connection as FailoverConnection).release();
    if (inner) await this.driver.releaseConnection(inner);
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}

/** One acquisition of a connection; outside a transaction it may move to a fresh connection to redo a statement. */
class FailoverConnection implements DatabaseConnection {
  inTransaction = false;

  constructor(
    private inner: DatabaseConnection | undefined,
    private readonly driver: Driver,
    private readonly errors: DialectErrors,
    private readonly rethrow: Rethrow,
  ) {}

  current(): DatabaseConnection {
    if (!this.inner) throw new StoreUnavailableError('no database connection');
    return this.inner;
  }

  /** Gives up the connection (once); answers the one to hand back to the pool. */
  release(): DatabaseConnection | undefined {
    const inner = this.inner;
    this.inner = undefined;
    return inner;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // bun:sqlite throws synchronously; mysql2 rejects.
    const run = async () => this.current().executeQuery<R>(query);
    if (this.inTransaction) return run().catch(this.rethrow);
    return redoing(
      this.errors,
      run,
      (e) => statementRedoable(this.errors, e, query.sql),
      () => this.reconnect(),
    ).catch(this.rethrow);
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.current().streamQuery<R>(query, chunkSize);
    } catch (e) {
      this.rethrow(e);
    }
  }

  /** The old connection goes back (a broken one leaves its pool by itself); the next comes from wherever the pool now points. */
  private async reconnect(): Promise<void> {
    const old = this.release();
    if (old) await this.driver.releaseConnection(old).catch(() => undefined);
    this.inner = await this.driver.acquireConnection();
  }
}
