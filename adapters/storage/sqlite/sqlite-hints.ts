import { sql } from 'kysely';
import type { PlannerHints } from '../dialect.ts';

export const sqliteHints: PlannerHints = {
  // SQLite's planner takes the narrow index by itself.
  forceIndex: () => sql``,
  // SQLite keeps the order of a CROSS JOIN.
  fixedJoinOrder: { select: sql``, join: sql.raw('CROSS JOIN') },
};
