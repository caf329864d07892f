import type { ColumnDefinitionBuilder, InsertQueryBuilder, Kysely, Dialect as KyselyDialect, RawBuilder } from 'kysely';
import type { Tables } from './tables.ts';

/**
 * Everything that differs between the databases the service runs on, in one small interface (the
 * model is Kysely's `Dialect`). Each database is one folder, `mysql/` and `sqlite/`, of small
 * `<dialect>-<part>.ts` files; the repositories, the row listing and the migrations ask the dialect
 * and never branch on its name. Adding a database means one folder and one line in database.ts.
 */
export interface StorageDialect {
  /** For logs and benchmarks; storage code never branches on it. */
  readonly name: 'mysql' | 'sqlite';
  /** URL prefixes of `DATABASE_URL` this dialect opens (`mysql://`, `sqlite:`…). */
  readonly schemes: readonly string[];
  /** Kysely's dialect for `url` (a connection pool, or the embedded file). */
  connect(url: string, options: { poolSize?: number }): KyselyDialect;
  /** Whether a second connection to `url` (another thread's) sees the same data: not for a database held in memory. */
  sharedByConnections(url: string): boolean;
  readonly errors: DialectErrors;
  readonly limits: DialectLimits;
  readonly locking: DialectLocking;
  readonly upsert: Upsert;
  /** The same upsert as SQL text after a hand-written multi-row INSERT: on a clash of `key`, `set` take the inserted values. */
  readonly upsertClause: (key: readonly string[], set: readonly string[]) => string;
  readonly hints: PlannerHints;
  readonly sequences: Sequences;
  /** Column types and table options, for the migrations. */
  readonly schema: SchemaTypes;
}

/** What a driver's error means. */
export interface DialectErrors {
  /** A unique key refused the write: the record exists already. */
  isDuplicateKey(e: unknown): boolean;
  /** The database, or the connection to it, is away (a retry may succeed), as opposed to a refused statement. */
  isUnavailable(e: unknown): boolean;
  /**
   * The transaction lost a conflict with another (a deadlock; on a cluster, another node committed a
   * conflicting write first): it was rolled back, and running it again is right.
   */
  isDeadlock(e: unknown): boolean;
  /** The statement never ran (the server refused it unrun, or it was never sent): sending it again is safe, elsewhere if need be. */
  notRun(e: unknown): boolean;
  /** The connection broke under the statement: the server may or may not have run it (safe to send again only if it only read). */
  isConnectionLost(e: unknown): boolean;
}

/** Sizes past which the database refuses a statement or plans it badly. */
export interface DialectLimits {
  /** Most tables one SELECT may join. */
  readonly maxJoinedTables: number;
  /** Most values in one `IN (…)` list for the statement to stay an index lookup; longer lists are split. */
  readonly inListSize: number;
  /** Rows one transaction of a bulk load (an import page) should carry: fewer where a write holds the whole database. */
  readonly bulkRows: number;
  /** Import pages written at once on separate connections (1 where a write holds the whole database). */
  readonly bulkLanes: number;
}

/** Locks and snapshots: how a write sees the latest commits, and how reads over several tables agree. */
export interface DialectLocking {
  /** A SELECT a write depends on, locking what it reads until the transaction ends. */
  lockedRead<Q extends { forUpdate(): Q }>(query: Q): Q;
  /** The same lock as raw SQL, at the end of a hand-written SELECT. */
  readonly lockClause: RawBuilder<unknown>;
  /** Runs reads of several tables that must see one state of the database. */
  snapshot<T>(db: Kysely<Tables>, read: (db: Kysely<Tables>) => Promise<T>): Promise<T>;
}

/** The value an INSERT carried for `column`, as an upsert's update may use it. */
export type InsertedValue = (column: string) => RawBuilder<unknown>;

/**
 * Turns an INSERT into an upsert: on a clash of `key`, the existing record's columns are set by
 * `set` (which may name the existing value by its column, or the inserted one by `inserted`).
 */
export type Upsert = <DB, TB extends keyof DB, O>(
  insert: InsertQueryBuilder<DB, TB, O>,
  key: readonly string[],
  set: (inserted: InsertedValue) => Record<string, RawBuilder<unknown>>,
) => InsertQueryBuilder<DB, TB, O>;

/** Plans the query planner does not find by itself. */
export interface PlannerHints {
  /** Written after a table in FROM: read it through this index. */
  forceIndex(index: string): RawBuilder<unknown>;
  /**
   * Joins kept in the order written (the first table drives): `select` goes right after SELECT,
   * `join` is the join keyword between the tables.
   */
  readonly fixedJoinOrder: { select: RawBuilder<unknown>; join: RawBuilder<unknown> };
  /**
   * Read a table by points of its primary key: FROM `table` WHERE its leading key columns take one
   * of the values listed for each (every combination), as point lookups whatever the statistics say.
   * `from` goes after FROM, `where` after WHERE.
   */
  keyPoints(table: string, columns: [name: string, values: number[]][]): { from: RawBuilder<unknown>; where: RawBuilder<unknown> };
}

/** Named counters (`id_sequences`). */
export interface Sequences {
  /** Adds `by` to the counter in one short statement; returns its new value (one past the range reserved). */
  advance(db: Kysely<Tables>, name: string, by: number): Promise<number>;
}

/** Column types and table options, as the migrations write them. */
export interface SchemaTypes {
  /** Ends every CREATE TABLE; `charset default` leaves the collation to the character set (as migration 006 did). */
  tableOptions(collation?: 'unicode' | 'charset default'): RawBuilder<unknown>;
  /** Ends a CREATE TABLE whose records are stored in primary-key order, without a hidden row id. */
  readonly clusteredTableOptions: RawBuilder<unknown>;
  /** A primary key the database numbers. */
  readonly autoId: { type: RawBuilder<unknown>; build: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder };
  /** Integers of the row tables: 64-bit, 32-bit, and 0/1 flags. */
  readonly int64: RawBuilder<unknown>;
  readonly int32: RawBuilder<unknown>;
  readonly flag: RawBuilder<unknown>;
  readonly float64: RawBuilder<unknown>;
  /** Indexed text of at most `chars` characters, compared byte-wise (it is stored case-folded). */
  binaryKey(chars: number): RawBuilder<unknown>;
  /** Indexed ASCII codes (cell statuses) of at most `chars` characters, compared byte-wise. */
  asciiKey(chars: number): RawBuilder<unknown>;
  /** Text up to 16 MB, compared byte-wise. */
  readonly binaryText: RawBuilder<unknown>;
  /** Text up to 16 MB. */
  readonly mediumText: RawBuilder<unknown>;
  /** Text up to 4 GB. */
  readonly longText: RawBuilder<unknown>;
  /**
   * Lets existing `text` columns hold 16 MB where the database caps TEXT lower, keeping whether
   * each may be NULL; a no-op where TEXT has no such cap.
   */
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not as Tables says
  widenText(db: Kysely<any>, columnsByTable: Record<string, string[]>): Promise<void>;
}
