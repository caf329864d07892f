import type { CompiledQuery, DatabaseConnection, Driver, Dialect as KyselyDialect, QueryResult, TransactionSettings } from 'kysely';
import { StoreUnavailableError } from '../../core/errors.ts';

type Rethrow = (e: unknown) => never;

/**
 * Kysely's dialect with the driver's "database away" errors (as the storage dialect tells them)
 * thrown as core's StoreUnavailableError, so the kernel answers 503 and retries without knowing
 * any driver's error codes. Every other error passes through untouched.
 */
export function withUnavailableErrors(inner: KyselyDialect, isUnavailable: (e: unknown) => boolean): KyselyDialect {
  const rethrow: Rethrow = (e) => {
    if (!isUnavailable(e)) throw e;
    throw new StoreUnavailableError(e instanceof Error ? e.message : String(e), { cause: e });
  };
  return {
    createAdapter: () => inner.createAdapter(),
    createDriver: () => new UnavailableDriver(inner.createDriver(), rethrow),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
  };
}

/** Delegates to the driver; its connections are wrapped once each (pools reuse them). */
class UnavailableDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
  private readonly unwrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(
    private readonly driver: Driver,
    private readonly rethrow: Rethrow,
  ) {}

  private inner(connection: DatabaseConnection): DatabaseConnection {
    return this.unwrapped.get(connection) ?? connection;
  }

  init(): Promise<void> {
    return this.driver.init().catch(this.rethrow);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.driver.acquireConnection().catch(this.rethrow);
    let outer = this.wrapped.get(connection);
    if (!outer) {
      outer = wrapConnection(connection, this.rethrow);
      this.wrapped.set(connection, outer);
      this.unwrapped.set(outer, connection);
    }
    return outer;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(this.inner(connection), settings).catch(this.rethrow);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(this.inner(connection)).catch(this.rethrow);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(this.inner(connection)).catch(this.rethrow);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(this.inner(connection));
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}

function wrapConnection(connection: DatabaseConnection, rethrow: Rethrow): DatabaseConnection {
  return {
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      // bun:sqlite throws synchronously; mysql2 rejects.
      try {
        return connection.executeQuery<R>(query).catch(rethrow);
      } catch (e) {
        return rethrow(e);
      }
    },
    async *streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
      try {
        yield* connection.streamQuery<R>(query, chunkSize);
      } catch (e) {
        rethrow(e);
      }
    },
  };
}
