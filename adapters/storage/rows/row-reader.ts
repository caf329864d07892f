import { type Kysely, sql } from 'kysely';
import type { CellStatus, Cell, StoredRow } from '../../../core/model.ts';
import type { Database } from '../database.ts';
import { chunks, integerList } from '../compiled-queries.ts';
import type { Tables } from '../tables.ts';
import { parseCells } from './cell-records.ts';

const POINTS_PER_READ = 4_000;

/** Reads whole rows by seq: the row documents, with tool cells (value, error, status) from their keys. */
export class RowReader {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
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
    const { dialect } = this.database;
    if (seqs.length > dialect.limits.inListSize) {
      const parts = await Promise.all(chunks(seqs, dialect.limits.inListSize).map((part) => this.getMany(projectPk, part, toolCols)));
      return parts.flat();
    }
    if (toolCols.length) return dialect.locking.snapshot(this.db, (db) => this.readRows(db, projectPk, seqs, toolCols));
    return this.readRows(this.db, projectPk, seqs, toolCols);
  }

  private async readRows(db: Kysely<Tables>, projectPk: number, seqs: number[], toolCols: number[]): Promise<StoredRow[]> {
    const { hints } = this.database.dialect;
    const rowsAt = hints.keyPoints('project_rows', [
      ['project_pk', [projectPk]],
      ['seq', seqs],
    ]);
    const [rows, statuses] = await Promise.all([
      sql<{
        seq: number | string;
        cells: string;
      }>`SELECT seq, cells FROM ${rowsAt.from} WHERE ${rowsAt.where} AND deleted_at IS NULL`.execute(db),
      toolCols.length ? this.cellKeys(db, projectPk, toolCols, seqs) : Promise.resolve({ rows: [] }),
    ]).then(([r, s]) => [r.rows, s.rows] as const);
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
   * Tool cell keys of these rows (statuses, and values since migration 008), by primary-key points:
   * at most POINTS_PER_READ (column, row) pairs per statement, so a wide page stays a short query.
   */
  private async cellKeys(db: Kysely<Tables>, projectPk: number, toolCols: number[], seqs: number[]) {
    const rows: { seq: number | string; col_no: number; status: string; cell: string | null }[] = [];
    for (const part of chunks(seqs, Math.max(1, Math.floor(POINTS_PER_READ / toolCols.length)))) {
      const at = this.database.dialect.hints.keyPoints('cell_keys', [
        ['project_pk', [projectPk]],
        ['col_no', toolCols],
        ['seq', part],
      ]);
      const read = await sql<(typeof rows)[number]>`SELECT seq, col_no, status, cell FROM ${at.from} WHERE ${at.where}`.execute(db);
      rows.push(...read.rows);
    }
    return { rows };
  }

  async runsOf(projectPk: number, colNo: number, seqs: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const part of chunks(seqs, this.database.dialect.limits.inListSize)) {
      const rows = await this.db
        .selectFrom('cell_keys')
        .select(['seq', 'run_id'])
        .where('project_pk', '=', projectPk)
        .where('col_no', '=', colNo)
        .where('seq', 'in', integerList(part))
        .where('run_id', 'is not', null)
        .execute();
      for (const r of rows) out.set(Number(r.seq), r.run_id as string);
    }
    return out;
  }

  /** Up to `limit` live rows after `afterSeq`, in insertion order. */
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
    return this.getMany(
      projectPk,
      seqs.map((r) => Number(r.seq)),
      toolCols,
    );
  }

  /**
   * Cells per (column, status) over the project's live rows: deleted rows' keys go with them, so the
   * keys alone tell. One grouped count per column, in one statement (UNION ALL): with the column
   * named by equality each part reads one primary-key range; `col_no IN (…)` made MariaDB walk the
   * whole project's text index and look each record up (10× slower at 100,000 rows).
   */
  async statusCounts(projectPk: number, colNos: number[]): Promise<{ colNo: number; status: CellStatus; cells: number }[]> {
    const part = (colNo: number) =>
      this.db
        .selectFrom('cell_keys')
        .select(['col_no', 'status', (eb) => eb.fn.countAll<number>().as('n')])
        .where('project_pk', '=', projectPk)
        .where('col_no', '=', colNo)
        .groupBy(['col_no', 'status']);
    const [first, ...others] = colNos;
    if (first === undefined) return [];
    const rows = await others.reduce((q, colNo) => q.unionAll(part(colNo)), part(first)).execute();
    return rows.map((r) => ({ colNo: Number(r.col_no), status: r.status as CellStatus, cells: Number(r.n) }));
  }

  /** Tool columns of live projects that hold `queued` or `running` cells. */
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
}
