import { type Kysely, sql } from 'kysely';
import type { StoredRow } from '../../../core/model.ts';
import type { FilterNode, SortSpec } from '../../../core/rows/filter-parse.ts';
import type { RowPageQuery } from '../../../core/ports/storage.ts';
import type { Database } from '../database.ts';
import { keyedFrom } from './cell-key-joins.ts';
import { type Entry, type ListingShape, ListingMemory, type ProjectState, type SeekKey } from './listing-memory.ts';
import type { RowChanges } from './row-changes.ts';
import type { RowCounters } from './row-counters.ts';
import { afterSql, filterColumns, sortKeyTerms, sortSql } from './row-filter-sql.ts';
import type { RowReader } from './row-reader.ts';
import { filterKey, type SharedTotals } from './shared-totals.ts';
import type { Tables } from '../tables.ts';

/** From this offset on, a page starts from the nearest remembered anchor (below it, OFFSET is cheap anyway). */
const SEEK_FROM = 1_000;
/** Rows read before a deep page, to remember anchors at the page and up to this many rows above it. */
const ANCHOR_MARGIN = 8;

interface Plan {
  q: RowPageQuery;
  filter: FilterNode | null;
  used: number[];
  /** Drive from the filter column and sort its matches (deep pages of a selective filter). */
  filterFirst: boolean;
}

/**
 * Reads pages of rows. The page's sequence numbers come from a narrow index (live rows, or the
 * typed cell keys when filtering/sorting); only then are the page's full rows read. A filtered
 * total is counted in its own query over the filter's columns only, and shared by every process
 * (SharedTotals); the positions of deep pages are remembered (ListingMemory) and follow every
 * process's writes through the change log (RowChanges).
 */
export class RowListing {
  constructor(
    private readonly database: Database,
    private readonly memory: ListingMemory,
    private readonly counters: RowCounters,
    private readonly reader: RowReader,
    private readonly totals: SharedTotals,
    private readonly changes: RowChanges,
  ) {}

  private get db() {
    return this.database.db;
  }

  private get dialect() {
    return this.database.dialect;
  }

  async page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }> {
    const sortCols = q.sort.map((s) => s.colNo);
    const filterCols = [...filterColumns(q.filter)];
    // A filter that reads no column (only empty groups) matches every row.
    const filter = filterCols.length ? q.filter : null;
    const used = [...new Set([...sortCols, ...filterCols])];
    const toolCols = q.toolCols ?? [];
    if (!filter && q.offset < SEEK_FROM) {
      // Page 1 and other shallow pages: the page and the row count at once.
      const plan = { q, filter, used, filterFirst: false };
      const [found, counts] = await Promise.all([this.seqs(plan, undefined, q.offset), this.counters.countAndVersion(q.projectPk)]);
      return { rows: await this.reader.getMany(q.projectPk, found.seqs, toolCols), total: counts.rows };
    }
    // The project's counter first: whatever is read after it is at least as new.
    const counts = await this.counters.state(q.projectPk);
    let total = counts.rows;
    if (filter) {
      const key = filterKey(filter);
      const known = await this.totals.exact(q.projectPk, key, counts.version);
      total =
        known ??
        (await this.totals.recount(
          q.projectPk,
          key,
          { filter, filterCols, valueCols: [...filterColumns(filter, 'value')], statusCols: [...filterColumns(filter, 'status')] },
          async (trx) => (await this.counters.countAndVersion(q.projectPk, trx)).version,
          (trx) => this.countMatches(trx, q.projectPk, filter, filterCols),
        ));
    }
    // A page past the end costs nothing more.
    if (q.offset >= total) return { rows: [], total };
    const shape = this.listShape(q, filter, filterCols, sortCols);
    const entry = q.offset >= SEEK_FROM ? await this.remembered(shape.key, counts) : undefined;
    const from = entry && (await this.anchorFor(entry, q, filter, used));
    // Read a few rows before the page too, unless an anchor sits exactly at the page: the anchors
    // for next time, at the page and a few rows above it — new rows sorting before the page move the
    // first one past it, and the other is still there to start from.
    const gap = q.offset - (from?.offset ?? 0);
    const before = Math.min(ANCHOR_MARGIN, gap);
    const skip = gap - before;
    const plan = { q, filter, used, filterFirst: this.filterFirst(q, filter, filterCols, skip, total, counts.rows) };
    const found = await this.seqs(plan, from?.at, skip, before);
    const anchors: [number, SeekKey][] = [];
    const [first, atPage] = [found.keys[0], found.keys[before - 1]];
    if (before && first) anchors.push([q.offset - before + 1, first]);
    if (before > 1 && atPage) anchors.push([q.offset, atPage]);
    const last = found.keys[found.keys.length - 1];
    if (found.seqs.length === q.limit && last) anchors.push([q.offset + q.limit, last]);
    if (q.offset >= SEEK_FROM || anchors.some(([o]) => o >= SEEK_FROM)) {
      // Anchors are kept only if no write committed while they were read: a write they already
      // reflect would otherwise be counted in again when the memory catches up with it.
      const after = await this.counters.state(q.projectPk);
      if (after.version === counts.version) this.memory.rememberAnchors(shape, counts, anchors);
    }
    return { rows: await this.reader.getMany(q.projectPk, found.seqs, toolCols), total };
  }

  /** The remembered entry of a listing, brought up to the project's state `now` when it is behind. */
  private async remembered(key: string, now: ProjectState): Promise<Entry | undefined> {
    const found = this.memory.lookup(key, now);
    if (!found || found.current) return found?.entry;
    const changes = await this.changes.since(found.entry.projectPk, found.entry.at.changeId, now.changeId);
    return this.memory.catchUp(found.entry, changes, now);
  }

  /**
   * The anchor to start a deep page from: the nearest one below the page, once the rows added since
   * it was read are counted in (those that match and sort before it move it down).
   */
  private async anchorFor(entry: Entry, q: RowPageQuery, filter: FilterNode | null, used: number[]) {
    for (let tries = 0; tries < 3; tries++) {
      const near = ListingMemory.nearest(entry, q.offset);
      if (!near || near.unseen.length === 0) return near;
      const before = await this.rowsBefore(q, filter, used, near.at, near.unseen);
      this.memory.settle(entry, near.offset, before);
      if (near.offset + before <= q.offset) return { offset: near.offset + before, at: near.at };
    }
    return undefined;
  }

  /** How many of rows `seqs` match the filter and come before `at` in the listing's order. */
  private async rowsBefore(q: RowPageQuery, filter: FilterNode | null, used: number[], at: SeekKey, seqs: number[]): Promise<number> {
    if (used.length === 0) return seqs.filter((seq) => seq < at.seq).length;
    const { from, alias, d } = keyedFrom(this.dialect, q.projectPk, used, filter);
    const seq = sql.ref(`${d}.seq`);
    // As the seek reads it: a row is before the anchor unless the comparison says it is after.
    const after = afterSql(q.sort, alias, seq, at);
    const r = await sql<{ n: number }>`SELECT COUNT(*) AS n ${from} AND ${seq} IN (${sql.join(seqs)})
      AND NOT COALESCE(${after}, FALSE)`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
  }

  private listShape(q: RowPageQuery, filter: FilterNode | null, filterCols: number[], sortCols: number[]): ListingShape {
    return {
      key: `L${q.projectPk}\u0000${JSON.stringify(filter)}\u0000${JSON.stringify(q.sort)}`,
      filter,
      ...shapeColumns(q.projectPk, filter, filterCols),
      sortCols,
    };
  }

  /**
   * Deep pages of a filter + sort: walking the sort index checks the filter row by row, about
   * (rows skipped / share of matching rows) rows; scanning the filter column and sorting its matches
   * costs about the project's rows plus the matches. Take the cheaper one.
   */
  private filterFirst(
    q: RowPageQuery,
    filter: FilterNode | null,
    filterCols: number[],
    skip: number,
    total: number,
    rows: number,
  ): boolean {
    if (!filter || q.sort.length === 0 || filterCols.some((c) => q.sort.some((s) => s.colNo === c)) || total === 0) return false;
    const walked = ((skip + q.limit) * rows) / total;
    return walked > rows / 2 + total;
  }

  /**
   * The page's seqs (and, for anchors, each one's sort keys): `skip` rows after `after` (or from the
   * start), then `before + limit` rows.
   */
  private async seqs(plan: Plan, after: SeekKey | undefined, skip: number, before = 0): Promise<{ seqs: number[]; keys: SeekKey[] }> {
    const { q } = plan;
    const take = q.limit + before;
    let rows: Record<string, unknown>[];
    if (plan.used.length === 0) {
      // Walking the clustered rows (JSON and all) for a deep OFFSET costs ~10x the narrow index.
      const hint = this.dialect.hints.forceIndex('project_rows_live');
      const seek = after ? sql`AND seq > ${after.seq}` : sql``;
      rows = (
        await sql<Record<string, unknown>>`SELECT seq FROM project_rows ${hint}
        WHERE project_pk = ${q.projectPk} AND deleted_at IS NULL ${seek} ORDER BY seq LIMIT ${take} OFFSET ${skip}`.execute(this.db)
      ).rows;
    } else {
      // Sort columns lead, so the first sort walks its index in order and stops at the page.
      const cols = plan.filterFirst ? [...filterColumns(plan.filter), ...q.sort.map((s) => s.colNo)] : plan.used;
      const { from, alias, d, straight } = keyedFrom(this.dialect, q.projectPk, [...new Set(cols)], plan.filter, plan.filterFirst);
      const seek = after ? sql`AND ${afterSql(q.sort, alias, sql.ref(`${d}.seq`), after)}` : sql``;
      const order = [...sortSql(q.sort, alias), sql`${sql.ref(`${d}.seq`)} ASC`];
      const select = [sql`${sql.ref(`${d}.seq`)} AS seq`, ...sortKeyTerms(q.sort, alias)];
      rows = (
        await sql<Record<string, unknown>>`SELECT ${straight} ${sql.join(select)} ${from} ${seek}
        ORDER BY ${sql.join(order)} LIMIT ${take} OFFSET ${skip}`.execute(this.db)
      ).rows;
    }
    const keys = rows.map((r) => seekKey(r, q.sort));
    return { seqs: keys.slice(before).map((k) => k.seq), keys };
  }

  /** How many rows match a filter, counted over the filter's columns only. */
  private async countMatches(db: Kysely<Tables>, projectPk: number, filter: FilterNode, filterCols: number[]): Promise<number> {
    const { from } = keyedFrom(this.dialect, projectPk, filterCols, filter);
    return Number((await sql<{ total: number }>`SELECT COUNT(*) AS total ${from}`.execute(db)).rows[0]?.total ?? 0);
  }
}

function shapeColumns(projectPk: number, filter: FilterNode | null, filterCols: number[]) {
  return {
    projectPk,
    filterCols,
    valueCols: [...filterColumns(filter, 'value')],
    statusCols: [...filterColumns(filter, 'status')],
  };
}

function seekKey(r: Record<string, unknown>, sort: SortSpec[]): SeekKey {
  return {
    seq: Number(r.seq),
    keys: sort.map((s, i) => {
      const flag = Number(r[`f${i}`]);
      const key = r[`k${i}`];
      return [flag, key === null || key === undefined ? null : s.numeric ? Number(key) : String(key)] as [number, number | string | null];
    }),
  };
}
