import type { Cell, Column, StoredRow } from '../model.ts';
import { rowValues } from '../rows/row-view.ts';
import type { IcpDefinition } from './definition.ts';
import { type CriterionResult, scoreRow } from './score.ts';

/** How many best-fitting rows a score answer carries with their reasons. */
export const TOP_MATCHES = 25;

export interface TopMatch {
  row_id: string;
  score: number;
  reasons: CriterionResult[];
}

/** What scoring has found so far: rows with a score, their sum and the best rows. Plain JSON, so a run can store it. */
export interface ScoreTally {
  scored: number;
  sum: number;
  top: TopMatch[];
}

export const emptyTally = (): ScoreTally => ({ scored: 0, sum: 0, top: [] });

/** The average score, to one decimal; null when no row has one. */
export const averageScore = (t: ScoreTally): number | null => (t.scored ? Math.round((t.sum / t.scored) * 10) / 10 : null);

/**
 * Scores a page of rows into the tally (kept to the best TOP_MATCHES, ties in row order) and
 * answers the cells to write into a score column. `columns` are the columns scoring may read.
 */
export function scoreRowsInto(
  tally: ScoreTally,
  definition: IcpDefinition,
  columns: Column[],
  rows: StoredRow[],
): { seq: number; cell: Cell }[] {
  const cells: { seq: number; cell: Cell }[] = [];
  for (const row of rows) {
    const { score, reasons } = scoreRow(definition, rowValues(columns, row));
    cells.push({ seq: row.seq, cell: { v: score, s: 'completed' } });
    if (score === null) continue;
    tally.scored++;
    tally.sum += score;
    tally.top.push({ row_id: String(row.seq), score, reasons });
  }
  tally.top = tally.top.sort((a, b) => b.score - a.score || Number(a.row_id) - Number(b.row_id)).slice(0, TOP_MATCHES);
  return cells;
}
