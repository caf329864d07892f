import { sql } from 'kysely';
import { integerList } from '../compiled-queries.ts';
import type { PlannerHints } from '../dialect.ts';

export const sqliteHints: PlannerHints = {
  // SQLite's planner takes the narrow index by itself.
  forceIndex: () => sql``,
  // SQLite keeps the order of a CROSS JOIN.
  fixedJoinOrder: { select: sql``, join: sql.raw('CROSS JOIN') },
  // SQLite plans `a IN (…) AND b IN (…)` on the primary key as point lookups by itself.
  keyPoints: (table, columns) => ({
    from: sql.table(table),
    where: sql.join(
      columns.map(([name, values]) => sql`${sql.ref(name)} IN ${integerList(values)}`),
      sql` AND `,
    ),
  }),
};
