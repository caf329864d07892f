import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../adapters/storage/database.ts';
import { filterColumns, filterSql, sortSql } from '../../adapters/storage/rows/row-filter-sql.ts';
import type { FilterNode } from '../../core/rows/filter-parse.ts';
import type { RowPageQuery } from '../../core/ports/storage.ts';

/**
 * The SQL statements `SqlRowRepo.page` runs when it remembers nothing (adapters/storage/rows/row-listing.ts),
 * rebuilt with Kysely `sql` so they can be timed bare and EXPLAINed: the page's seqs and the total,
 * then the page's rows. Bare means uncached: the filtered total is counted and OFFSET rows skipped
 * every time (the repository remembers totals and deep-page anchors while the project is unchanged).
 * The bench checks that this replica returns the same page and total as the repository and warns
 * when they drift apart.
 */

export interface PageStatements {
  /** The page's sequence numbers. */
  page: RawBuilder<{ seq: number }>;
  /** The filtered total (COUNT over the filter's columns only); null without a filter. */
  count: RawBuilder<{ total: number }> | null;
}

const ref = (s: string) => sql.ref(s);

/** FROM … WHERE over one `cell_keys` alias per column, the first column driving, with the filter. */
function keyedFrom(projectPk: number, cols: number[], filter: FilterNode | null) {
  const names = new Map(cols.map((no, i) => [no, `k${i}`]));
  const alias = (no: number) => names.get(no) as string;
  const [driver, ...joined] = cols;
  const d = alias(driver as number);
  const joins = joined.map(
    (no) =>
      sql`JOIN cell_keys ${sql.raw(alias(no))} ON ${ref(`${alias(no)}.project_pk`)} = ${ref(`${d}.project_pk`)} AND ${ref(`${alias(no)}.col_no`)} = ${no} AND ${ref(`${alias(no)}.seq`)} = ${ref(`${d}.seq`)}`,
  );
  const where = filter ? sql`AND ${filterSql(filter, alias)}` : sql``;
  const from = sql`FROM cell_keys ${sql.raw(d)} ${sql.join(joins, sql` `)} WHERE ${ref(`${d}.project_pk`)} = ${projectPk} AND ${ref(`${d}.col_no`)} = ${driver} ${where}`;
  return { from, alias, d };
}

export function pageStatements(q: RowPageQuery, dialect: Database['dialect']): PageStatements {
  const filterCols = [...filterColumns(q.filter)];
  const used = [...new Set([...q.sort.map((s) => s.colNo), ...filterCols])];
  let page: RawBuilder<{ seq: number }>;
  if (used.length === 0) {
    const hint = dialect.hints.forceIndex('project_rows_live');
    page = sql`SELECT seq FROM project_rows ${hint} WHERE project_pk = ${q.projectPk} AND deleted_at IS NULL ORDER BY seq LIMIT ${q.limit} OFFSET ${q.offset}`;
  } else {
    const { from, alias, d } = keyedFrom(q.projectPk, used, q.filter);
    const order = [...sortSql(q.sort, alias), sql`${ref(`${d}.seq`)} ASC`];
    page = sql`SELECT ${ref(`${d}.seq`)} AS seq ${from} ORDER BY ${sql.join(order)} LIMIT ${q.limit} OFFSET ${q.offset}`;
  }
  const count = q.filter ? sql<{ total: number }>`SELECT COUNT(*) AS total ${keyedFrom(q.projectPk, filterCols, q.filter).from}` : null;
  return { page, count };
}

/** Row count and change counter from the sharded counters (read for every page). */
function countAndVersion(projectPk: number): RawBuilder<{ n: number; v: number }> {
  return sql`SELECT COALESCE(SUM(n), 0) AS n, COALESCE(SUM(v), 0) AS v FROM project_row_counts WHERE project_pk = ${projectPk}`;
}

/** Runs the page's statements as the repository does (same order and overlap, total never cached); cells stay unparsed. */
export async function barePage(database: Database, q: RowPageQuery): Promise<{ seqs: number[]; total: number }> {
  const db = database.db as Kysely<any>;
  const st = pageStatements(q, database.dialect);
  const total = async () => {
    const counters = await countAndVersion(q.projectPk).execute(db);
    if (!st.count) return Number(counters.rows[0]?.n ?? 0);
    return Number((await st.count.execute(db)).rows[0]?.total ?? 0);
  };
  const [page, n] = await Promise.all([st.page.execute(db), total()]);
  const seqs = page.rows.map((r) => Number(r.seq));
  if (seqs.length > 0) {
    await sql`SELECT seq, cells FROM project_rows WHERE project_pk = ${q.projectPk} AND seq IN (${sql.join(seqs)}) AND deleted_at IS NULL`.execute(
      db,
    );
  }
  return { seqs, total: n };
}

function inline(db: Kysely<any>, statement: RawBuilder<unknown>): string {
  const compiled = statement.compile(db);
  let i = 0;
  const value = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
  return compiled.sql.replace(/\?/g, () => value(compiled.parameters[i++]));
}

/** The page and count statements as text with their parameters inlined (values are numbers or LIKE patterns). */
export function statementText(database: Database, q: RowPageQuery): string {
  const st = pageStatements(q, database.dialect);
  const db = database.db as Kysely<any>;
  return [`-- page\n${inline(db, st.page)}`, ...(st.count ? [`-- total\n${inline(db, st.count)}`] : [])].join('\n');
}

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return '(no rows)';
  const keys = Object.keys(rows[0] as object);
  const cells = rows.map((r) => keys.map((k) => (r[k] === null ? 'NULL' : String(r[k]))));
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i] as number)).join(' | ');
  return [line(keys), widths.map((w) => '-'.repeat(w)).join('-+-'), ...cells.map(line)].join('\n');
}

/** MariaDB `EXPLAIN` plus `ANALYZE` (runs it: real row counts r_rows / r_filtered); SQLite `EXPLAIN QUERY PLAN`. */
async function explainOne(database: Database, statement: RawBuilder<unknown>): Promise<string> {
  const db = database.db as Kysely<any>;
  if (database.dialect.name === 'mysql') {
    const explain = await sql<Record<string, unknown>>`EXPLAIN ${statement}`.execute(db);
    const analyze = await sql<Record<string, unknown>>`ANALYZE ${statement}`.execute(db);
    return `EXPLAIN\n${table(explain.rows)}\nANALYZE\n${table(analyze.rows)}`;
  }
  const plan = await sql<{ id: number; parent: number; detail: string }>`EXPLAIN QUERY PLAN ${statement}`.execute(db);
  const depth = new Map<number, number>([[0, 0]]);
  return plan.rows
    .map((r) => {
      const level = (depth.get(Number(r.parent)) ?? 0) + 1;
      depth.set(Number(r.id), level);
      return `${'  '.repeat(level - 1)}${r.detail}`;
    })
    .join('\n');
}

/** Plans of the page statement and, when filtered, of the total's COUNT. */
export async function explainPage(database: Database, q: RowPageQuery): Promise<string> {
  const st = pageStatements(q, database.dialect);
  const parts = [`-- page\n${await explainOne(database, st.page)}`];
  if (st.count) parts.push(`-- total\n${await explainOne(database, st.count)}`);
  return parts.join('\n\n');
}
