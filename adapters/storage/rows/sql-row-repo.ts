import type { Cell, CellStatus, Column, StoredRow } from '../../../core/model.ts';
import type { FilledCell, JobsOf, RowInsertParts, RowPageQuery, RowRepo } from '../../../core/ports/storage.ts';
import type { Database } from '../database.ts';
import { ListingMemory } from './listing-memory.ts';
import { RowChanges } from './row-changes.ts';
import { RowCounters } from './row-counters.ts';
import { RowListing } from './row-listing.ts';
import { RowKeys } from './row-keys.ts';
import { RowReader } from './row-reader.ts';
import { RowWrites } from './row-write.ts';
import { RowWriter } from './row-writer.ts';
import { SharedTotals } from './shared-totals.ts';

/**
 * Row storage (docs/storage.md): reads (RowReader), pages and totals (RowListing), writes
 * (RowWriter, each one through RowWrites.run, which logs it in RowChanges), the project counters
 * and the listing memory of this process. Nothing here but wiring.
 */
export class SqlRowRepo implements RowRepo {
  readonly rowsPerStatement: number;
  readonly bulkRows: number;
  readonly bulkLanes: number;
  private readonly counters: RowCounters;
  private readonly reader: RowReader;
  private readonly listing: RowListing;
  private readonly writer: RowWriter;
  private readonly keys: RowKeys;

  /** `memory`: this process's listing memory (a test may hand its own, to look into it). */
  constructor(database: Database, memory = new ListingMemory()) {
    this.rowsPerStatement = database.dialect.limits.inListSize;
    this.bulkRows = database.dialect.limits.bulkRows;
    this.bulkLanes = database.dialect.limits.bulkLanes;
    this.counters = new RowCounters(database);
    this.reader = new RowReader(database);
    const totals = new SharedTotals(database);
    const changes = new RowChanges(database);
    this.listing = new RowListing(database, memory, this.counters, this.reader, totals, changes);
    const writes = new RowWrites(database, this.counters, totals, changes);
    this.writer = new RowWriter(database, writes);
    this.keys = new RowKeys(database, writes);
  }

  insert(projectPk: number, columns: Column[], rows: Record<number, Cell>[], with_: RowInsertParts = {}): Promise<number[]> {
    return this.writer.insert(projectPk, columns, rows, with_);
  }

  findKeys(projectPk: number, keys: string[]): Promise<Map<string, number>> {
    return this.keys.findKeys(projectPk, keys);
  }

  fillEmpty(projectPk: number, columns: Column[], updates: { seq: number; cells: Record<number, Cell> }[]): Promise<FilledCell[]> {
    return this.keys.fillEmpty(projectPk, columns, updates);
  }

  updateCells(projectPk: number, seq: number, cells: Record<number, Cell>, keyColumns?: number[]): Promise<boolean> {
    return this.keys.updateCells(projectPk, seq, cells, keyColumns);
  }

  replaceKeys(projectPk: number, settings: string, keys: { seq: number; key: string }[]): Promise<void> {
    return this.keys.replaceKeys(projectPk, settings, keys);
  }

  page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }> {
    return this.listing.page(q);
  }

  get(projectPk: number, seq: number, toolCols?: number[]): Promise<StoredRow | undefined> {
    return this.reader.get(projectPk, seq, toolCols);
  }

  first(projectPk: number, toolCols?: number[]): Promise<StoredRow | undefined> {
    return this.reader.first(projectPk, toolCols);
  }

  counts(projectPks: number[]): Promise<Map<number, number>> {
    return this.counters.counts(projectPks);
  }

  async version(projectPk: number): Promise<number> {
    return (await this.counters.countAndVersion(projectPk)).version;
  }

  softDelete(projectPk: number, seqs: number[]): Promise<number> {
    return this.writer.softDelete(projectPk, seqs);
  }

  statusCounts(projectPk: number, colNos: number[]): Promise<{ colNo: number; status: CellStatus; cells: number }[]> {
    return this.reader.statusCounts(projectPk, colNos);
  }

  unfinishedColumns(): Promise<{ projectPk: number; colNo: number }[]> {
    return this.reader.unfinishedColumns();
  }

  moveStatus(
    projectPk: number,
    colNo: number,
    from: CellStatus[],
    to: CellStatus,
    seqs?: number[],
    jobs?: JobsOf<number[]>,
    runId?: string | null,
  ): Promise<number[]> {
    return this.writer.moveStatus(projectPk, colNo, from, to, seqs, jobs, runId);
  }

  moveHeld(
    projectPk: number,
    colNo: number,
    seqs: number[],
    from: CellStatus[],
    to: CellStatus,
    by: { jobId: string; hold: boolean },
    jobs?: JobsOf<number[]>,
  ): Promise<number[]> {
    return this.writer.moveStatus(projectPk, colNo, from, to, seqs, jobs, undefined, by);
  }

  runsOf(projectPk: number, colNo: number, seqs: number[]): Promise<Map<number, string>> {
    return this.reader.runsOf(projectPk, colNo, seqs);
  }

  writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[], jobs?: JobsOf<void>): Promise<void> {
    return this.writer.writeCells(projectPk, colNo, cells, jobs);
  }

  getMany(projectPk: number, seqs: number[], toolCols?: number[]): Promise<StoredRow[]> {
    return this.reader.getMany(projectPk, seqs, toolCols);
  }

  pageAfter(projectPk: number, afterSeq: number, limit: number, toolCols?: number[]): Promise<StoredRow[]> {
    return this.reader.pageAfter(projectPk, afterSeq, limit, toolCols);
  }
}
