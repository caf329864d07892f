import { sql } from 'kysely';
import type { DialectLocking } from '../dialect.ts';

/**
 * SQLite has no row locks: transactions begin immediate (sqlite-connect.ts), holding the database's
 * write lock from their start, so they run one at a time whichever connection opened them (the
 * embedded mode's two threads, other processes) and read the latest commits without asking.
 */
export const sqliteLocking: DialectLocking = {
  lockedRead: (query) => query,
  lockClause: sql``,
  snapshot: (db, read) => read(db),
};
