import type { Cell, Column, Project, StoredRow, WaterfallStep } from '../model.ts';
import type { ToolItem } from '../plugins/plugin-types.ts';

/** A claimed batch of one tool column: what every step of the host loop reads. */
export interface EnrichBatch {
  jobId: string;
  project: Project;
  columns: Column[];
  column: Column;
  /** The steps in the order this batch tries them (listed, or `order: "auto"`'s). */
  steps: WaterfallStep[];
  /** Each step's place in the column's list: it keys the step's charges, whatever the order. */
  listedIndex: number[];
  /** Claimed rows (now `running`), with the values of every other column. */
  rows: StoredRow[];
  /** The run that queued each claimed cell (cells queued without limits have none): its charges keep its limits. */
  runOf: Map<number, string>;
}

/** A row still looking for a value. */
export interface OpenRow {
  row: StoredRow;
  /** Column name → value: what templates, run conditions and formulas read. */
  values: Record<string, unknown>;
}

/** A row ready for one step's tool: its rendered item and the key of its charge. */
export interface ReadyRow extends OpenRow {
  item: ToolItem<Record<string, unknown>>;
  /** Idempotency key of this row's charge for this step of this job (a retry does not pay again). */
  chargeKey: string;
}

/** Cells decided so far, by row seq. */
export type Settled = Map<number, Cell>;
