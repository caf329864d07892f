import type { DialectLimits } from '../dialect.ts';

export const sqliteLimits: DialectLimits = {
  // SQLite joins at most 64 tables.
  maxJoinedTables: 64,
  // SQLite has no IN-list threshold; the MySQL bound keeps the statements alike and far below its 32,766 parameters.
  inListSize: 800,
  // A write holds the whole file: beside a 100,000-row import, GET /projects measured p99 ≈ 75 ms at
  // 100 rows per transaction and ≈ 100 ms at 250.
  bulkRows: 250,
  // One writer at a time: a second page would only wait for the file.
  bulkLanes: 1,
};
