import type { DialectLimits } from '../dialect.ts';

export const sqliteLimits: DialectLimits = {
  // SQLite joins at most 64 tables.
  maxJoinedTables: 64,
  // SQLite has no IN-list threshold; the MySQL bound keeps the statements alike and far below its 32,766 parameters.
  inListSize: 800,
};
