import { sql } from 'kysely';
import type { PlannerHints } from '../dialect.ts';

export const mysqlHints: PlannerHints = {
  // MariaDB would walk the clustered rows (JSON and all) for a deep OFFSET unless told the narrow index.
  forceIndex: (index) => sql`FORCE INDEX (${sql.raw(index)})`,
  fixedJoinOrder: { select: sql`STRAIGHT_JOIN`, join: sql.raw('JOIN') },
  // `project_pk = 1 AND seq IN (1, 2)` is planned from the table's statistics: while they lag behind
  // a growing project (single-row inserts), MariaDB reads the whole project through `project_pk`
  // (~90 ms per 100,000 rows for a page of 2). Whole-key tuples on the forced primary key are point
  // lookups whatever the statistics say.
  keyPoints: (table, columns) => {
    let tuples: number[][] = [[]];
    for (const [, values] of columns) tuples = tuples.flatMap((t) => values.map((v) => [...t, v]));
    const names = sql.join(columns.map(([name]) => sql.ref(name)));
    const points = sql.join(tuples.map((t) => sql`(${sql.join(t)})`));
    return { from: sql`${sql.table(table)} FORCE INDEX (PRIMARY)`, where: sql`(${names}) IN (${points})` };
  },
};
