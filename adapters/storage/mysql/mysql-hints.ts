import { sql } from 'kysely';
import { assertIntegers } from '../compiled-queries.ts';
import type { PlannerHints } from '../dialect.ts';

export const mysqlHints: PlannerHints = {
  // MariaDB would walk the clustered rows (JSON and all) for a deep OFFSET unless told the narrow index.
  forceIndex: (index) => sql`FORCE INDEX (${sql.raw(index)})`,
  fixedJoinOrder: { select: sql`STRAIGHT_JOIN`, join: sql.raw('JOIN') },
  // `project_pk = 1 AND seq IN (1, 2)` is planned from the table's statistics: while they lag behind
  // a growing project (single-row inserts), MariaDB reads the whole project through `project_pk`
  // (~90 ms per 100,000 rows for a page of 2). Whole-key tuples on the forced primary key are point
  // lookups whatever the statistics say.
  // The tuples are written as text (integers only, checked): a node per value cost more than the read.
  keyPoints: (table, columns) => {
    let tuples: string[] = [''];
    for (const [, values] of columns) {
      assertIntegers(values);
      tuples = tuples.flatMap((t) => values.map((v) => (t ? `${t}, ${v}` : String(v))));
    }
    const names = sql.join(columns.map(([name]) => sql.ref(name)));
    return {
      from: sql`${sql.table(table)} FORCE INDEX (PRIMARY)`,
      where: sql`(${names}) IN (${sql.raw(tuples.map((t) => `(${t})`).join(', '))})`,
    };
  },
};
