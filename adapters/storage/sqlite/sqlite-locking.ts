import { sql } from 'kysely';
import type { DialectLocking } from '../dialect.ts';

/**
 * SQLite has no row locks: write transactions run one at a time (one connection per process, the
 * file lock between processes), so a write reads the latest commits without asking.
 */
export const sqliteLocking: DialectLocking = {
  lockedRead: (query) => query,
  lockClause: sql``,
  snapshot: (db, read) => read(db),
};
