import { type RawBuilder, sql } from 'kysely';
import { validationError } from '../../../core/errors.ts';
import type { FilterNode } from '../../../core/rows/filter-parse.ts';
import type { StorageDialect } from '../dialect.ts';
import { filterSql } from './row-filter-sql.ts';

/** A FROM … WHERE over the cell keys of some columns, and the names to select and order by. */
export interface KeyedFrom {
  from: RawBuilder<unknown>;
  /** The alias of a column's `cell_keys` record. */
  alias: (colNo: number) => string;
  /** The alias of the driving (first) column. */
  d: string;
  /** Goes right after SELECT (keeps the join order, when asked). */
  straight: RawBuilder<unknown>;
}

/**
 * FROM … WHERE over one `cell_keys` alias per column, the first column driving, with the filter.
 * Every live row has exactly one key per column, so the joins are 1:1 on (project, column, seq).
 * `fixedOrder` keeps the joins in the order given. More columns than the database joins is a 422.
 */
export function keyedFrom(
  dialect: StorageDialect,
  projectPk: number,
  cols: number[],
  filter: FilterNode | null,
  fixedOrder = false,
): KeyedFrom {
  const max = dialect.limits.maxJoinedTables;
  if (cols.length > max) {
    throw validationError(`This listing filters and sorts on ${cols.length} columns; the database reads at most ${max} at once`, [
      { path: 'filter_groups', message: `with sort_rules, reads ${cols.length} columns; at most ${max}` },
    ]);
  }
  const names = new Map(cols.map((no, i) => [no, `k${i}`]));
  const alias = (no: number) => names.get(no) as string;
  const [driver, ...joined] = cols;
  const d = alias(driver as number);
  const { fixedJoinOrder } = dialect.hints;
  const join = fixedOrder ? fixedJoinOrder.join : sql.raw('JOIN');
  const joins = joined.map(
    (no) =>
      sql`${join} cell_keys ${sql.raw(alias(no))} ON ${sql.ref(`${alias(no)}.project_pk`)} = ${sql.ref(`${d}.project_pk`)} AND ${sql.ref(`${alias(no)}.col_no`)} = ${no} AND ${sql.ref(`${alias(no)}.seq`)} = ${sql.ref(`${d}.seq`)}`,
  );
  const where = filter ? sql`AND ${filterSql(filter, alias)}` : sql``;
  const from = sql`FROM cell_keys ${sql.raw(d)} ${sql.join(joins, sql` `)} WHERE ${sql.ref(`${d}.project_pk`)} = ${projectPk} AND ${sql.ref(`${d}.col_no`)} = ${driver} ${where}`;
  const straight = fixedOrder ? fixedJoinOrder.select : sql``;
  return { from, alias, d, straight };
}
