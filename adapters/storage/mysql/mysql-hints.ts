import { sql } from 'kysely';
import type { PlannerHints } from '../dialect.ts';

export const mysqlHints: PlannerHints = {
  // MariaDB would walk the clustered rows (JSON and all) for a deep OFFSET unless told the narrow index.
  forceIndex: (index) => sql`FORCE INDEX (${sql.raw(index)})`,
  fixedJoinOrder: { select: sql`STRAIGHT_JOIN`, join: sql.raw('JOIN') },
};
