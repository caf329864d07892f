import type { DialectLimits } from '../dialect.ts';

export const mysqlLimits: DialectLimits = {
  // MySQL and MariaDB refuse a join of more than 61 tables.
  maxJoinedTables: 61,
  // Under MariaDB's in_predicate_conversion_threshold (1,000), past which an IN list turns into a scanned subquery.
  inListSize: 800,
  // Few, large transactions: each commit is a log flush; other writers go on beside them.
  bulkRows: 5_000,
  // Two pages side by side: 1,000,000 rows in 110.6 s instead of 154.5 s (bun run bench:import, 2 vCPUs); a third changed nothing.
  bulkLanes: 2,
};
