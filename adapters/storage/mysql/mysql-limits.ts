import type { DialectLimits } from '../dialect.ts';

export const mysqlLimits: DialectLimits = {
  // MySQL and MariaDB refuse a join of more than 61 tables.
  maxJoinedTables: 61,
  // Under MariaDB's in_predicate_conversion_threshold (1,000), past which an IN list turns into a scanned subquery.
  inListSize: 800,
  // Few, large transactions: each commit is a log flush; other writers go on beside them.
  bulkRows: 5_000,
  // Two pages side by side kept the server busy while the service makes the next statement (measured: bun run bench:import).
  bulkLanes: 2,
};
