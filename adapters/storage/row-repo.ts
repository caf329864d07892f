import { type Kysely, sql } from 'kysely';
import type { Cell, CellStatus, Column, StoredRow } from '../../core/model.ts';
import { cellKey } from '../../core/rows/cell-keys.ts';
import type { BuilderRunState, RowPageQuery, RowRepo } from '../../core/storage.ts';
import type { Database } from './database.ts';
import { builderStateValues } from './project-repo.ts';
import { chunks, insertMany, type ReusableQuery, reusableQuery } from './compiled-queries.ts';
import { RowListing } from './row-listing.ts';
import { SeqAllocator } from './seq-allocator.ts';
import type { CellKeyTable, Tables } from './tables.ts';

/** Counter shards per project: concurrent inserts rarely touch the same counter record. */
const COUNT_SHARDS = 64;
/** Rows per multi-row statement; cell keys are chunked to stay under both dialects' parameter limits. */
const ROW_CHUNK = 500;
const KEY_CHUNK = 2_000;
/** Inserts of at most this many rows may be written together with others (see insert). */
const COALESCE_MAX_ROWS = 20;
const COALESCE_MAX_CALLS = 200;
const ROW_FIELDS = ['project_pk', 'seq', 'cells', 'created_at', 'updated_at', 'deleted_at'] as const;
const KEY_FIELDS = ['project_pk', 'col_no', 'seq', 'status', 'is_empty', 'num_missing', 'num_key', 'text_key', 'text_full'] as const;

interface InsertLane {
  busy: boolean;
  queue: { rows: Record<number, Cell>[]; resolve: (seqs: number[]) => void; reject: (e: unknown) => void }[];
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
  private readonly listing: RowListing;
  private readonly bump: ReusableQuery<unknown>;

  constructor(private readonly database: Database) {
    this.seqs = new SeqAllocator(database);
    this.bump = this.bumpQuery();
    this.listing = new RowListing(database, (projectPk, seqs, toolCols) => this.getMany(projectPk, seqs, toolCols));
  }

  private get memory() {
    return this.listing.memory;
  }

  private get db() {
    return this.database.db;
  }

  private get dialect() {
    return this.database.dialect;
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
    const ticket = this.memory.beginWrite(projectPk, { kind: 'insert', firstSeq: first });
    await this.db.transaction().execute(async (trx) => {
      for (const part of chunks(rowValues, ROW_CHUNK)) await insertMany(trx, 'project_rows', ROW_FIELDS, part);
      for (const part of chunks(keyValues, KEY_CHUNK)) await insertMany(trx, 'cell_keys', KEY_FIELDS, part);
      await this.listing.measure(trx, ticket, seqs, 1);
      await this.bumpCount(trx, projectPk, rows.length);
      if (builderState) await trx.updateTable('projects').set(builderStateValues(builderState)).where('pk', '=', projectPk).execute();
    });
    this.memory.endWrite(ticket);
    return seqs;
  }

  /** Adds `delta` rows to the project's count and bumps its change counter, on a random shard. */
  private async bumpCount(trx: Kysely<Tables>, projectPk: number, delta: number): Promise<void> {
    await this.bump.run(trx, { pk: projectPk, shard: Math.floor(Math.random() * COUNT_SHARDS), delta });
  }

  /** The counter upsert, compiled once: it runs in every write. */
  private bumpQuery() {
    return reusableQuery(this.database.db, ['pk', 'shard', 'delta'], (v) => {
      const q = this.db.insertInto('project_row_counts').values({ project_pk: v('pk'), shard: v('shard'), n: v('delta'), v: 1 });
      return this.dialect.upsert(q, ['project_pk', 'shard'], () => ({ n: sql<number>`n + ${v('delta')}`, v: sql`v + 1` }));
    });
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
   * columns, both tables are read as one snapshot (the dialect's), so a cell never shows a new
   * status beside its old value while a batch of results is being written.
   */
  async getMany(projectPk: number, seqs: number[], toolCols: number[] = []): Promise<StoredRow[]> {
    if (seqs.length === 0) return [];
    if (seqs.length > this.dialect.limits.inListSize) {
      const parts = await Promise.all(chunks(seqs, this.dialect.limits.inListSize).map((part) => this.getMany(projectPk, part, toolCols)));
      return parts.flat();
    }
    if (toolCols.length) return this.dialect.locking.snapshot(this.db, (db) => this.readRows(db, projectPk, seqs, toolCols));
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

  async pageAfter(projectPk: number, afterSeq: number, limit: number, toolCols: number[] = []): Promise<StoredRow[]> {
    // The live-rows index (project_pk, deleted_at, seq) gives the seqs; only those rows are read.
    const seqs = await this.db
      .selectFrom('project_rows')
      .select('seq')
      .where('project_pk', '=', projectPk)
      .where('deleted_at', 'is', null)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
    return this.getMany(projectPk, seqs.map((r) => Number(r.seq)), toolCols);
  }

  /** One page of rows and the total (see RowListing). */
  page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }> {
    return this.listing.page(q);
  }

  async softDelete(projectPk: number, seqs: number[]): Promise<number> {
    if (seqs.length === 0) return 0;
    const colNos = (await this.db.selectFrom('project_columns').select('col_no').where('project_pk', '=', projectPk).execute()).map((c) => Number(c.col_no));
    const ticket = this.memory.beginWrite(projectPk, { kind: 'delete' });
    const deleted = await this.db.transaction().execute(async (trx) => {
      let deleted = 0;
      for (const part of chunks(seqs, this.dialect.limits.inListSize)) {
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
          await this.listing.measure(trx, ticket, part, -1);
          await trx.deleteFrom('cell_keys').where('project_pk', '=', projectPk).where('col_no', 'in', colNos).where('seq', 'in', part).execute();
        }
      }
      if (deleted) await this.bumpCount(trx, projectPk, -deleted);
      return deleted;
    });
    if (deleted) this.memory.endWrite(ticket);
    return deleted;
  }

  async unfinishedColumns(): Promise<{ projectPk: number; colNo: number }[]> {
    const rows = await this.db
      .selectFrom('cell_keys')
      .innerJoin('projects', 'projects.pk', 'cell_keys.project_pk')
      .select(['cell_keys.project_pk', 'cell_keys.col_no'])
      .distinct()
      .where('cell_keys.status', 'in', ['queued', 'running'])
      .where('projects.deleted_at', 'is', null)
      .execute();
    return rows.map((r) => ({ projectPk: Number(r.project_pk), colNo: Number(r.col_no) }));
  }

  async moveStatus(projectPk: number, colNo: number, from: CellStatus[], to: CellStatus, seqs?: number[]): Promise<number[]> {
    const ticket = this.memory.beginWrite(projectPk, { kind: 'cells', colNo, valuesToo: false });
    const moved = await this.db.transaction().execute(async (trx) => {
      const moved: number[] = [];
      const parts = seqs ? chunks(seqs, this.dialect.limits.inListSize) : [undefined];
      for (const part of parts) {
        if (part && part.length === 0) continue;
        let q = trx
          .selectFrom('cell_keys')
          .select('seq')
          .where('project_pk', '=', projectPk)
          .where('col_no', '=', colNo)
          .where('status', 'in', from);
        if (part) q = q.where('seq', 'in', part);
        const found = (await this.dialect.locking.lockedRead(q).execute()).map((r) => Number(r.seq));
        await this.listing.measure(trx, ticket, found, -1);
        for (const ids of chunks(found, this.dialect.limits.inListSize)) {
          await trx.updateTable('cell_keys').set({ status: to }).where('project_pk', '=', projectPk).where('col_no', '=', colNo).where('seq', 'in', ids).execute();
        }
        await this.listing.measure(trx, ticket, found, 1);
        moved.push(...found);
      }
      // Status filters may match differently now: listings remembered elsewhere are stale.
      if (moved.length) await this.bumpCount(trx, projectPk, 0);
      return moved;
    });
    if (moved.length) this.memory.endWrite(ticket);
    return moved;
  }

  async writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[]): Promise<void> {
    if (cells.length === 0) return;
    const ticket = this.memory.beginWrite(projectPk, { kind: 'cells', colNo, valuesToo: true });
    await this.db.transaction().execute(async (trx) => {
      for (const part of chunks(cells, this.dialect.limits.inListSize)) {
        // Rows deleted meanwhile have no key any more: lock the keys that exist, write only those.
        const read = trx
          .selectFrom('cell_keys')
          .select('seq')
          .where('project_pk', '=', projectPk)
          .where('col_no', '=', colNo)
          .where('seq', 'in', part.map((c) => c.seq));
        const live = new Set((await this.dialect.locking.lockedRead(read).execute()).map((r) => Number(r.seq)));
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
        const written = keyValues.map((k) => k.seq);
        await this.listing.measure(trx, ticket, written, -1);
        const fields = ['status', 'is_empty', 'num_missing', 'num_key', 'text_key', 'text_full', 'cell'] as const;
        await this.dialect
          .upsert(trx.insertInto('cell_keys').values(keyValues), ['project_pk', 'col_no', 'seq'], (inserted) => Object.fromEntries(fields.map((f) => [f, inserted(f)])))
          .execute();
        await this.listing.measure(trx, ticket, written, 1);
      }
      await this.bumpCount(trx, projectPk, 0); // values changed: listings remembered elsewhere are stale
    });
    this.memory.endWrite(ticket);
  }

}
