import { sql } from 'kysely';
import type { DialectLocking } from '../dialect.ts';

/**
 * InnoDB: a plain SELECT in a transaction reads its snapshot, possibly older than the latest
 * commit; `FOR UPDATE` reads the latest committed values and holds them until the write commits,
 * so concurrent writers to the same records run one after the other.
 */
export const mysqlLocking: DialectLocking = {
  lockedRead: (query) => query.forUpdate(),
  lockClause: sql`FOR UPDATE`,
  // One transaction, one snapshot: a cell never shows a new status beside an old value.
  snapshot: (db, read) => db.transaction().execute(read),
};
