import { type Kysely, sql } from 'kysely';
import type { Cell, CellStatus, Column, StoredRow } from '../../core/model.ts';
import { cellKey } from '../../core/rows/cell-keys.ts';
import type { BuilderRunState, RowPageQuery, RowRepo } from '../../core/storage.ts';
import type { Database } from './database.ts';
import { builderStateValues } from './project-repo.ts';
import { filterColumns, filterSql, sortSql } from './row-filter-sql.ts';
import { SeqAllocator } from './seq-allocator.ts';
import type { CellKeyTable, Tables } from './tables.ts';

/** Counter shards per project: concurrent inserts rarely touch the same counter record. */
const COUNT_SHARDS = 16;
/** Rows per multi-row statement; cell keys are chunked to stay under both dialects' parameter limits. */
const ROW_CHUNK = 500;
const KEY_CHUNK = 2_000;
const IN_CHUNK = 1_000;

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

  constructor(private readonly database: Database) {
    this.seqs = new SeqAllocator(database);
  }

  private get db() {
    return this.database.db;
  }

  private get mysql() {
    return this.database.dialect === 'mysql';
  }

  async insert(projectPk: number, columns: Column[], rows: Record<number, Cell>[], builderState?: BuilderRunState): Promise<number[]> {
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

  private async bumpCount(trx: Kysely<Tables>, projectPk: number, delta: number): Promise<void> {
    const shard = Math.floor(Math.random() * COUNT_SHARDS);
    const q = trx.insertInto('project_row_counts').values({ project_pk: projectPk, shard, n: delta });
    if (this.mysql) await q.onDuplicateKeyUpdate({ n: sql`n + ${delta}` }).execute();
    else await q.onConflict((oc) => oc.columns(['project_pk', 'shard']).doUpdateSet({ n: sql`n + ${delta}` })).execute();
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
            .select(['seq', 'col_no', 'status'])
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
      cells[no] = { ...(cells[no] ?? { v: null }), s: s.status as CellStatus };
    }
    return seqs.flatMap((seq) => {
      const cells = bySeq.get(seq);
      return cells === undefined ? [] : [{ seq, cells }];
    });
  }

  /**
   * One page of rows. The page's sequence numbers come from a narrow index (live rows, or the
   * typed cell keys when filtering/sorting); only then are the page's full rows read.
   */
  async page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }> {
    const used = [...filterColumns(q.filter, new Set(q.sort.map((s) => s.colNo)))];
    let seqs: number[];
    let total: number;
    if (used.length === 0) {
      const [ids, counts] = await Promise.all([
        this.db
          .selectFrom('project_rows')
          .select('seq')
          .where('project_pk', '=', q.projectPk)
          .where('deleted_at', 'is', null)
          .orderBy('seq')
          .limit(q.limit)
          .offset(q.offset)
          .execute(),
        this.counts([q.projectPk]),
      ]);
      seqs = ids.map((r) => Number(r.seq));
      total = counts.get(q.projectPk) ?? 0;
    } else {
      ({ seqs, total } = await this.keyedPage(q, used));
    }
    return { rows: await this.getMany(q.projectPk, seqs, q.toolCols ?? []), total };
  }

  private async keyedPage(q: RowPageQuery, used: number[]): Promise<{ seqs: number[]; total: number }> {
    // Sort columns lead so the first sort can walk its index in order.
    const names = new Map(used.map((no, i) => [no, `k${i}`]));
    const alias = (no: number) => names.get(no) as string;
    const [driver, ...joined] = used;
    const d = alias(driver as number);
    const joins = joined.map(
      (no) =>
        sql`JOIN cell_keys ${sql.raw(alias(no))} ON ${sql.ref(`${alias(no)}.project_pk`)} = ${sql.ref(`${d}.project_pk`)} AND ${sql.ref(`${alias(no)}.col_no`)} = ${no} AND ${sql.ref(`${alias(no)}.seq`)} = ${sql.ref(`${d}.seq`)}`,
    );
    const where = q.filter ? sql`AND ${filterSql(q.filter, alias)}` : sql``;
    const order = [...sortSql(q.sort, alias), sql`${sql.ref(`${d}.seq`)} ASC`];
    const from = sql`FROM cell_keys ${sql.raw(d)} ${sql.join(joins, sql` `)} WHERE ${sql.ref(`${d}.project_pk`)} = ${q.projectPk} AND ${sql.ref(`${d}.col_no`)} = ${driver} ${where}`;
    if (!q.filter) {
      // Sort only: every live row has one key per column, so the live count is the total.
      const [page, counts] = await Promise.all([
        sql<{ seq: number }>`SELECT ${sql.ref(`${d}.seq`)} AS seq ${from} ORDER BY ${sql.join(order)} LIMIT ${q.limit} OFFSET ${q.offset}`.execute(this.db),
        this.counts([q.projectPk]),
      ]);
      return { seqs: page.rows.map((r) => Number(r.seq)), total: counts.get(q.projectPk) ?? 0 };
    }
    // Filtered: the match count comes with the page in one pass (window count over the matches).
    const page = await sql<{ seq: number; total: number }>`SELECT ${sql.ref(`${d}.seq`)} AS seq, COUNT(*) OVER () AS total ${from} ORDER BY ${sql.join(order)} LIMIT ${q.limit} OFFSET ${q.offset}`.execute(this.db);
    if (page.rows.length > 0) return { seqs: page.rows.map((r) => Number(r.seq)), total: Number(page.rows[0]?.total) };
    const count = await sql<{ total: number }>`SELECT COUNT(*) AS total ${from}`.execute(this.db);
    return { seqs: [], total: Number(count.rows[0]?.total ?? 0) };
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
      return moved;
    });
  }

  async writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[]): Promise<void> {
    if (cells.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const part of chunks(cells, ROW_CHUNK)) {
        const seqs = part.map((c) => c.seq);
        const read = trx
          .selectFrom('project_rows')
          .select(['seq', 'cells', 'created_at'])
          .where('project_pk', '=', projectPk)
          .where('seq', 'in', seqs)
          .where('deleted_at', 'is', null);
        const rows = await (this.mysql ? read.forUpdate() : read).execute();
        const live = new Map(rows.map((r) => [Number(r.seq), r]));
        const now = Date.now();
        const rowValues = [];
        const keyValues: CellKeyTable[] = [];
        for (const { seq, cell } of part) {
          const row = live.get(seq);
          if (!row) continue; // deleted meanwhile: nothing to write
          const doc = parseCells(row.cells);
          doc[String(colNo)] = storedCell(cell);
          rowValues.push({ project_pk: projectPk, seq, cells: JSON.stringify(doc), created_at: Number(row.created_at), updated_at: now, deleted_at: null });
          keyValues.push({ project_pk: projectPk, col_no: colNo, seq, ...cellKey(cell.v, cell.s ?? 'completed') });
        }
        if (rowValues.length === 0) continue;
        const rowsUpsert = trx.insertInto('project_rows').values(rowValues);
        const keysUpsert = trx.insertInto('cell_keys').values(keyValues);
        if (this.mysql) {
          await rowsUpsert.onDuplicateKeyUpdate({ cells: sql`VALUES(cells)`, updated_at: sql`VALUES(updated_at)` }).execute();
          await keysUpsert
            .onDuplicateKeyUpdate({
              status: sql`VALUES(status)`,
              is_empty: sql`VALUES(is_empty)`,
              num_missing: sql`VALUES(num_missing)`,
              num_key: sql`VALUES(num_key)`,
              text_key: sql`VALUES(text_key)`,
              text_full: sql`VALUES(text_full)`,
            })
            .execute();
        } else {
          await rowsUpsert
            .onConflict((oc) => oc.columns(['project_pk', 'seq']).doUpdateSet({ cells: sql`excluded.cells`, updated_at: sql`excluded.updated_at` }))
            .execute();
          await keysUpsert
            .onConflict((oc) =>
              oc.columns(['project_pk', 'col_no', 'seq']).doUpdateSet({
                status: sql`excluded.status`,
                is_empty: sql`excluded.is_empty`,
                num_missing: sql`excluded.num_missing`,
                num_key: sql`excluded.num_key`,
                text_key: sql`excluded.text_key`,
                text_full: sql`excluded.text_full`,
              }),
            )
            .execute();
        }
      }
    });
  }
}
