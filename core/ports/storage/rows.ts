import type { Cell, CellStatus, Column, StoredRow } from '../../model.ts';
import type { FilterNode, SortSpec } from '../../rows/filter-parse.ts';
import type { JobsOf } from './job-outbox.ts';
import type { BuilderRunState } from './projects.ts';

export interface RowPageQuery {
  projectPk: number;
  /** Tool columns: their cell status lives with the cell keys and is read from there. */
  toolCols?: number[];
  filter: FilterNode | null;
  sort: SortSpec[];
  limit: number;
  offset: number;
}

/** What an insert writes beside the rows, in the same transaction. */
export interface RowInsertParts {
  /** A builder page's state: the rows and the checkpoint commit together (no duplicate on resume). */
  builderState?: BuilderRunState;
  /** Jobs the insert starts, stored in the outbox with it. */
  jobs?: JobsOf<number[]>;
  /** The run that queues the rows' `queued` tool cells (auto-run columns). */
  runId?: string;
  /**
   * Each row's unique key (null: none), written with the rows; a key the project holds already
   * fails the whole insert with the dialect's duplicate-key error, and nothing is written.
   */
  keys?: (string | null)[];
}

export interface RowRepo {
  /**
   * The most rows one call should name for each of its statements to stay one index lookup; a call
   * naming more is split into several statements. Work handed out in batches (enrichment jobs)
   * stays at or under it.
   */
  readonly rowsPerStatement: number;
  /** Rows one insert of a bulk load (an import page) should carry on this database. */
  readonly bulkRows: number;
  /**
   * Pages of one bulk load written at once: their rows go in side by side on as many connections
   * (1 where a write holds the whole database). Only pages that start no jobs and check no unique key.
   */
  readonly bulkLanes: number;
  /** Inserts rows atomically (all or none); returns their sequence numbers, in order. */
  insert(projectPk: number, columns: Column[], rows: Record<number, Cell>[], with_?: RowInsertParts): Promise<number[]>;
  page(q: RowPageQuery): Promise<{ rows: StoredRow[]; total: number }>;
  get(projectPk: number, seq: number, toolCols?: number[]): Promise<StoredRow | undefined>;
  first(projectPk: number, toolCols?: number[]): Promise<StoredRow | undefined>;
  /** Live row counts of several projects. */
  counts(projectPks: number[]): Promise<Map<number, number>>;
  /** The project's change counter: it moves with every write of its rows or cells. */
  version(projectPk: number): Promise<number>;
  /** Soft-deletes rows of the project; returns how many were live. */
  softDelete(projectPk: number, seqs: number[]): Promise<number>;
  /**
   * How many cells of these columns have each status, over the project's live rows: one grouped
   * count of their cell keys (a scan of the columns' keys, no index of its own: cache the answer).
   */
  statusCounts(projectPk: number, colNos: number[]): Promise<{ colNo: number; status: CellStatus; cells: number }[]>;
  /** Tool columns of live projects that hold `queued` or `running` cells (work to resume after a restart). */
  unfinishedColumns(): Promise<{ projectPk: number; colNo: number }[]>;
  /**
   * Rows of one column whose cell status is one of `from`, moved to `to`; returns their seqs.
   * `runId` (a run's id, or null for none) records the run that queues them; undefined keeps it.
   * Whatever job held a cell moved so lets go of it (`moveHeld`).
   */
  moveStatus(
    projectPk: number,
    colNo: number,
    from: CellStatus[],
    to: CellStatus,
    seqs?: number[],
    jobs?: JobsOf<number[]>,
    runId?: string | null,
  ): Promise<number[]>;
  /**
   * An enrichment job's move of tool cells: of `seqs`, those whose status is one of `from` and that
   * no job holds, or `by.jobId` does, move to `to`; a cell another job holds is left to it. With
   * `by.hold` the moved cells are held by `by.jobId` (its claim, its own retry), else by none. One job
   * holds a cell at a time, so a cell runs and is charged in one job (docs/decisions.md). Returns their seqs.
   */
  moveHeld(
    projectPk: number,
    colNo: number,
    seqs: number[],
    from: CellStatus[],
    to: CellStatus,
    by: { jobId: string; hold: boolean },
    jobs?: JobsOf<number[]>,
  ): Promise<number[]>;
  /** Live rows of the project holding these unique keys: key → seq. */
  findKeys(projectPk: number, keys: string[]): Promise<Map<string, number>>;
  /** Fills the empty input cells of existing rows with the given values (on_conflict "update"); answers the cells filled. */
  fillEmpty(projectPk: number, columns: Column[], updates: { seq: number; cells: Record<number, Cell> }[]): Promise<FilledCell[]>;
  /**
   * Writes input cells of one live row (PATCH rows/{row_id}): its document and the cells' keys, in
   * one write that moves the change counter; with `keyColumns` (the unique key's column numbers, one
   * of them edited) its unique key is made anew from its values, and a key another live row holds
   * fails the write with UniqueKeyTaken (nothing written). False: the row is not live.
   */
  updateCells(projectPk: number, seq: number, cells: Record<number, Cell>, keyColumns?: number[]): Promise<boolean>;
  /** Replaces the project's unique keys by these (every live row's), together with its settings (JSON), in one transaction. */
  replaceKeys(projectPk: number, settings: string, keys: { seq: number; key: string }[]): Promise<void>;
  /** The run each of these cells of one column was queued by (cells without one are absent). */
  runsOf(projectPk: number, colNo: number, seqs: number[]): Promise<Map<number, string>>;
  /** Writes tool results (value, status, error) of one column, atomically for the batch. */
  writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[], jobs?: JobsOf<void>): Promise<void>;
  /** Several rows by seq (live only), in the order asked. */
  getMany(projectPk: number, seqs: number[], toolCols?: number[]): Promise<StoredRow[]>;
  /** Up to `limit` live rows after `afterSeq`, in insertion order: a walk over a project that no insert or delete can make skip a row. */
  pageAfter(projectPk: number, afterSeq: number, limit: number, toolCols?: number[]): Promise<StoredRow[]>;
}

export class UniqueKeyTaken extends Error {
  override name = 'UniqueKeyTaken';
  constructor() {
    super('a unique key of these rows was just taken by another write');
  }
}

/** An input cell filled in an existing row. */
export interface FilledCell {
  seq: number;
  colNo: number;
  value: unknown;
}
