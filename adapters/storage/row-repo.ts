import { type Kysely, sql } from 'kysely';
import type { Cell, CellStatus, Column, StoredRow } from '../../core/model.ts';
import { cellKey } from '../../core/rows/cell-keys.ts';
import type { BuilderRunState, RowPageQuery, RowRepo } from '../../core/storage.ts';
import type { Database } from './database.ts';
import { builderStateValues } from './project-repo.ts';
import type { FilterNode } from '../../core/rows/filter-parse.ts';
import { filterColumns, filterSql, sortSql } from './row-filter-sql.ts';
import { SeqAllocator } from './seq-allocator.ts';
import type { CellKeyTable, Tables } from './tables.ts';

/** Counter shards per project: concurrent inserts rarely touch the same counter record. */
const COUNT_SHARDS = 64;
/** Rows per multi-row statement; cell keys are chunked to stay under both dialects' parameter limits. */
const ROW_CHUNK = 500;
const KEY_CHUNK = 2_000;
/** Under MariaDB's in_predicate_conversion_threshold (1,000), past which IN lists turn into a scanned subquery. */
const IN_CHUNK = 800;
/** Inserts of at most this many rows may be written together with others (see insert). */
const COALESCE_MAX_ROWS = 20;
const COALESCE_MAX_CALLS = 200;

interface InsertLane {
  busy: boolean;
  queue: { rows: Record<number, Cell>[]; resolve: (seqs: number[]) => void; reject: (e: unknown) => void }[];
}

/** Filtered totals remembered per process (oldest forgotten first). */
const TOTALS_CACHED = 2_000;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const parseCells = (s: string): Record<string, Cell> => JSON.parse(s) as Record<string, Cell>;

/** Cell documents keep value and error; a tool cell's status is kept with its key (cheap to move). */
function storedCell(cell: Cell): Cell {
  return cell.e ? { v: cell.v, e: cell.e } : { v: cell.v };
}

export class SqlRowRepo implements RowRepo {
  private readonly seqs: SeqAllocator;
  /** Small inserts waiting to be written together, per project and column set. */
  private readonly lanes = new Map<string, InsertLane>();
  /** Filtered totals by (project, filter), with the change counter they were counted at. */
  private readonly totals = new Map<string, { version: number; total: number }>();

  constructor(private readonly database: Database) {
    this.seqs = new SeqAllocator(database);
  }

  private get db() {
    return this.database.db;
  }

  private get mysql() {
    return this.database.dialect === 'mysql';
  }

  /**
   * Small inserts into one project that arrive while one is being written wait for it and are then
   * written together, in one transaction (one commit, one fsync, for many API calls). Order is
   * arrival order. A batch shares its fate: if its transaction fails, each of its calls fails.
   */
  async insert(projectPk: number, columns: Column[], rows: Record<number, Cell>[], builderState?: BuilderRunState): Promise<number[]> {
    if (builderState || rows.length === 0 || rows.length > COALESCE_MAX_ROWS) return this.insertNow(projectPk, columns, rows, builderState);
    const key = `${projectPk}:${columns.map((c) => `${c.no}${c.type}`).join(',')}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { busy: false, queue: [] };
      this.lanes.set(key, lane);
    }
    const waiting = new Promise<number[]>((resolve, reject) => lane.queue.push({ rows, resolve, reject }));
    if (!lane.busy) void this.drainLane(key, lane, projectPk, columns);
    return waiting;
  }

  private async drainLane(key: string, lane: InsertLane, projectPk: number, columns: Column[]): Promise<void> {
    lane.busy = true;
    while (lane.queue.length) {
      const batch = lane.queue.splice(0, COALESCE_MAX_CALLS);
      try {
        const seqs = await this.insertNow(projectPk, columns, batch.flatMap((w) => w.rows));
        let at = 0;
        for (const w of batch) {
          w.resolve(seqs.slice(at, at + w.rows.length));
          at += w.rows.length;
        }
      } catch (e) {
        for (const w of batch) w.reject(e);
      }
    }
    lane.busy = false;
    this.lanes.delete(key);
  }

  private async insertNow(projectPk: number, columns: Column[], rows: Record<number, Cell>[], builderState?: BuilderRunState): Promise<number[]> {
    if (rows.length === 0) {
      if (builderState) await this.db.updateTable('projects').set(builderStateValues(builderState)).where('pk', '=', projectPk).execute();
      return [];
    }
    const first = await this.seqs.take(rows.length);
    const now = Date.now();
    const seqs = rows.map((_, i) => first + i);
    const rowValues = rows.map((cells, i) => {
      const stored: Record<number, Cell> = {};
      for (const [no, cell] of Object.entries(cells)) if (cell.v !== null || cell.e) stored[Number(no)] = storedCell(cell);
      return { project_pk: projectPk, seq: seqs[i] as number, cells: JSON.stringify(stored), created_at: now, updated_at: now, deleted_at: null };
    });
    const keyValues: CellKeyTable[] = [];
    rows.forEach((cells, i) => {
      for (const c of columns) {
        const cell = cells[c.no];
        const status: CellStatus = cell?.s ?? (c.type === 'tool' ? 'pending' : 'default');
        keyValues.push({ project_pk: projectPk, col_no: c.no, seq: seqs[i] as number, ...cellKey(cell?.v ?? null, status) });
      }
    });
    await this.db.transaction().execute(async (trx) => {
      for (const part of chunks(rowValues, ROW_CHUNK)) await trx.insertInto('project_rows').values(part).execute();
      for (const part of chunks(keyValues, KEY_CHUNK)) await trx.insertInto('cell_keys').values(part).execute();
      await this.bumpCount(trx, projectPk, rows.length);
      if (builderState) await trx.updateTable('projects').set(builderStateValues(builderState)).where('pk', '=', projectPk).execute();
    });
    return seqs;
  }

  /** Adds `delta` rows to the project's count and bumps its change counter, on a random shard. */
  private async bumpCount(trx: Kysely<Tables>, projectPk: number, delta: number): Promise<void> {
    const shard = Math.floor(Math.random() * COUNT_SHARDS);
    const q = trx.insertInto('project_row_counts').values({ project_pk: projectPk, shard, n: delta, v: 1 });
    if (this.mysql) await q.onDuplicateKeyUpdate({ n: sql`n + ${delta}`, v: sql`v + 1` }).execute();
    else await q.onConflict((oc) => oc.columns(['project_pk', 'shard']).doUpdateSet({ n: sql`n + ${delta}`, v: sql`v + 1` })).execute();
  }

  /** The live row count and change counter of a project, in one read. */
  private async countAndVersion(projectPk: number): Promise<{ rows: number; version: number }> {
    const r = await this.db
      .selectFrom('project_row_counts')
      .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('n'), eb.lit(0)).as('n'), eb.fn.coalesce(eb.fn.sum<number>('v'), eb.lit(0)).as('v')])
      .where('project_pk', '=', projectPk)
      .executeTakeFirst();
    return { rows: Number(r?.n ?? 0), version: Number(r?.v ?? 0) };
  }

  async counts(projectPks: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>(projectPks.map((pk) => [pk, 0]));
    if (projectPks.length === 0) return out;
    const rows = await this.db
      .selectFrom('project_row_counts')
      .select(['project_pk', (eb) => eb.fn.sum<number>('n').as('n')])
      .where('project_pk', 'in', projectPks)
      .groupBy('project_pk')
      .execute();
    for (const r of rows) out.set(Number(r.project_pk), Number(r.n));
    return out;
  }

  async get(projectPk: number, seq: number, toolCols: number[] = []): Promise<StoredRow | undefined> {
    return (await this.getMany(projectPk, [seq], toolCols))[0];
  }

  async first(projectPk: number, toolCols: number[] = []): Promise<StoredRow | undefined> {
    const r = await this.db
      .selectFrom('project_rows')
      .select('seq')
      .where('project_pk', '=', projectPk)
      .where('deleted_at', 'is', null)
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    return r ? this.get(projectPk, Number(r.seq), toolCols) : undefined;
  }

  /**
   * Live rows by seq, in the order asked, with tool cell statuses filled in from the keys. With tool
   * columns, MySQL reads both tables in one transaction (one snapshot), so a cell never shows a new
   * status beside its old value while a batch of results is being written.
   */
  async getMany(projectPk: number, seqs: number[], toolCols: number[] = []): Promise<StoredRow[]> {
    if (seqs.length === 0) return [];
    if (seqs.length > IN_CHUNK) {
      const parts = await Promise.all(chunks(seqs, IN_CHUNK).map((part) => this.getMany(projectPk, part, toolCols)));
      return parts.flat();
    }
    if (toolCols.length && this.mysql) return this.db.transaction().execute((trx) => this.readRows(trx, projectPk, seqs, toolCols));
    return this.readRows(this.db, projectPk, seqs, toolCols);
  }

  private async readRows(db: Kysely<Tables>, projectPk: number, seqs: number[], toolCols: number[]): Promise<StoredRow[]> {
    const [rows, statuses] = await Promise.all([
      db
        .selectFrom('project_rows')
        .select(['seq', 'cells'])
        .where('project_pk', '=', projectPk)
        .where('seq', 'in', seqs)
        .where('deleted_at', 'is', null)
        .execute(),
      toolCols.length
        ? db
            .selectFrom('cell_keys')
            .select(['seq', 'col_no', 'status', 'cell'])
            .where('project_pk', '=', projectPk)
            .where('col_no', 'in', toolCols)
            .where('seq', 'in', seqs)
            .execute()
        : Promise.resolve([]),
    ]);
    const bySeq = new Map(rows.map((r) => [Number(r.seq), parseCells(r.cells)]));
    for (const s of statuses) {
      const cells = bySeq.get(Number(s.seq));
      if (!cells) continue;
      const no = String(s.col_no);
      // A tool cell's value and error live with its key (migration 008).
      const stored = s.cell ? (JSON.parse(s.cell) as Cell) : (cells[no] ?? { v: null });
      cells[no] = { ...stored, s: s.status as CellStatus };
    }
    return seqs.flatMap((seq) => {
      const cells = bySeq.get(seq);
      return cells === undefined ? [] : [{ seq, cells }];
    });
  }

  /**
   * One page of rows. The page's sequence numbers come from a narrow index (live rows, or the
   * typed cell keys when filtering/sorting); only then are the page's full rows read. A filtered
   * total is counted in its own query over the filter's columns only, and reused while the
   * project's change counter stays the same (paging through one filter counts once).
   */
  async page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }> {
    const sortCols = q.sort.map((s) => s.colNo);
    const filterCols = [...filterColumns(q.filter)];
    const used = [...new Set([...sortCols, ...filterCols])];
    // A filter that reads no column (only empty groups) matches every row.
    if (q.filter && filterCols.length) {
      // The total first (usually remembered): a page past the end then costs nothing more.
      const total = await this.filteredTotal(q.projectPk, q.filter, filterCols);
      const seqs = q.offset < total ? await this.keyedSeqs(q, used) : [];
      return { rows: await this.getMany(q.projectPk, seqs, q.toolCols ?? []), total };
    }
    const [seqs, total] = await Promise.all([
      used.length ? this.keyedSeqs(q, used) : this.liveSeqs(q),
      this.countAndVersion(q.projectPk).then((c) => c.rows),
    ]);
    return { rows: await this.getMany(q.projectPk, seqs, q.toolCols ?? []), total };
  }

  /** Live rows in insertion order, read from the narrow (project, deleted_at, seq) index. */
  private async liveSeqs(q: RowPageQuery): Promise<number[]> {
    // MariaDB would walk the clustered rows (JSON and all) for a deep OFFSET; the narrow index is ~10x cheaper.
    const hint = this.mysql ? sql`FORCE INDEX (project_rows_live)` : sql``;
    const r = await sql<{ seq: number }>`SELECT seq FROM project_rows ${hint}
      WHERE project_pk = ${q.projectPk} AND deleted_at IS NULL ORDER BY seq LIMIT ${q.limit} OFFSET ${q.offset}`.execute(this.db);
    return r.rows.map((row) => Number(row.seq));
  }

  /** FROM … WHERE over one `cell_keys` alias per column, the first column driving, with the filter. */
  private keyedFrom(projectPk: number, cols: number[], filter: FilterNode | null) {
    const names = new Map(cols.map((no, i) => [no, `k${i}`]));
    const alias = (no: number) => names.get(no) as string;
    const [driver, ...joined] = cols;
    const d = alias(driver as number);
    const joins = joined.map(
      (no) =>
        sql`JOIN cell_keys ${sql.raw(alias(no))} ON ${sql.ref(`${alias(no)}.project_pk`)} = ${sql.ref(`${d}.project_pk`)} AND ${sql.ref(`${alias(no)}.col_no`)} = ${no} AND ${sql.ref(`${alias(no)}.seq`)} = ${sql.ref(`${d}.seq`)}`,
    );
    const where = filter ? sql`AND ${filterSql(filter, alias)}` : sql``;
    const from = sql`FROM cell_keys ${sql.raw(d)} ${sql.join(joins, sql` `)} WHERE ${sql.ref(`${d}.project_pk`)} = ${projectPk} AND ${sql.ref(`${d}.col_no`)} = ${driver} ${where}`;
    return { from, alias, d };
  }

  /** The page's seqs when filtering or sorting: sort columns lead, so the first sort walks its index in order and stops at the page. */
  private async keyedSeqs(q: RowPageQuery, used: number[]): Promise<number[]> {
    const { from, alias, d } = this.keyedFrom(q.projectPk, used, q.filter);
    const order = [...sortSql(q.sort, alias), sql`${sql.ref(`${d}.seq`)} ASC`];
    const r = await sql<{ seq: number }>`SELECT ${sql.ref(`${d}.seq`)} AS seq ${from} ORDER BY ${sql.join(order)} LIMIT ${q.limit} OFFSET ${q.offset}`.execute(this.db);
    return r.rows.map((row) => Number(row.seq));
  }

  /** How many rows match a filter: counted over the filter's columns, reused until the project changes. */
  private async filteredTotal(projectPk: number, filter: FilterNode, cols: number[]): Promise<number> {
    const { from } = this.keyedFrom(projectPk, cols, filter);
    const query = sql<{ total: number }>`SELECT COUNT(*) AS total ${from}`;
    const compiled = query.compile(this.db);
    const key = `${projectPk}\u0000${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
    const { version } = await this.countAndVersion(projectPk);
    const cached = this.totals.get(key);
    if (cached && cached.version === version) return cached.total;
    const total = Number((await query.execute(this.db)).rows[0]?.total ?? 0);
    this.totals.set(key, { version, total });
    if (this.totals.size > TOTALS_CACHED) this.totals.delete(this.totals.keys().next().value as string);
    return total;
  }

  async softDelete(projectPk: number, seqs: number[]): Promise<number> {
    if (seqs.length === 0) return 0;
    const colNos = (await this.db.selectFrom('project_columns').select('col_no').where('project_pk', '=', projectPk).execute()).map((c) => Number(c.col_no));
    return this.db.transaction().execute(async (trx) => {
      let deleted = 0;
      for (const part of chunks(seqs, IN_CHUNK)) {
        const r = await trx
          .updateTable('project_rows')
          .set({ deleted_at: Date.now() })
          .where('project_pk', '=', projectPk)
          .where('seq', 'in', part)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        deleted += Number(r.numUpdatedRows);
        // Keys of deleted rows go at once, so filters and counts never see them.
        if (colNos.length) {
          await trx.deleteFrom('cell_keys').where('project_pk', '=', projectPk).where('col_no', 'in', colNos).where('seq', 'in', part).execute();
        }
      }
      if (deleted) await this.bumpCount(trx, projectPk, -deleted);
      return deleted;
    });
  }

  async moveStatus(projectPk: number, colNo: number, from: CellStatus[], to: CellStatus, seqs?: number[]): Promise<number[]> {
    return this.db.transaction().execute(async (trx) => {
      const moved: number[] = [];
      const parts = seqs ? chunks(seqs, IN_CHUNK) : [undefined];
      for (const part of parts) {
        if (part && part.length === 0) continue;
        let q = trx
          .selectFrom('cell_keys')
          .select('seq')
          .where('project_pk', '=', projectPk)
          .where('col_no', '=', colNo)
          .where('status', 'in', from);
        if (part) q = q.where('seq', 'in', part);
        const found = (await (this.mysql ? q.forUpdate() : q).execute()).map((r) => Number(r.seq));
        for (const ids of chunks(found, IN_CHUNK)) {
          await trx.updateTable('cell_keys').set({ status: to }).where('project_pk', '=', projectPk).where('col_no', '=', colNo).where('seq', 'in', ids).execute();
        }
        moved.push(...found);
      }
      // Status filters may match differently now: cached totals of this project are stale.
      if (moved.length) await this.bumpCount(trx, projectPk, 0);
      return moved;
    });
  }

  async writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[]): Promise<void> {
    if (cells.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const part of chunks(cells, IN_CHUNK)) {
        // Rows deleted meanwhile have no key any more: lock the keys that exist, write only those.
        const read = trx
          .selectFrom('cell_keys')
          .select('seq')
          .where('project_pk', '=', projectPk)
          .where('col_no', '=', colNo)
          .where('seq', 'in', part.map((c) => c.seq));
        const live = new Set((await (this.mysql ? read.forUpdate() : read).execute()).map((r) => Number(r.seq)));
        const keyValues: CellKeyTable[] = part
          .filter(({ seq }) => live.has(seq))
          .map(({ seq, cell }) => ({
            project_pk: projectPk,
            col_no: colNo,
            seq,
            ...cellKey(cell.v, cell.s ?? 'completed'),
            cell: JSON.stringify(storedCell(cell)),
          }));
        if (keyValues.length === 0) continue;
        const upsert = trx.insertInto('cell_keys').values(keyValues);
        const fields = ['status', 'is_empty', 'num_missing', 'num_key', 'text_key', 'text_full', 'cell'] as const;
        if (this.mysql) {
          await upsert.onDuplicateKeyUpdate(Object.fromEntries(fields.map((f) => [f, sql`VALUES(${sql.ref(f)})`]))).execute();
        } else {
          await upsert
            .onConflict((oc) => oc.columns(['project_pk', 'col_no', 'seq']).doUpdateSet(Object.fromEntries(fields.map((f) => [f, sql.ref(`excluded.${f}`)]))))
            .execute();
        }
      }
      await this.bumpCount(trx, projectPk, 0); // values changed: cached filtered totals are stale
    });
  }

}
