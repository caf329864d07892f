import type { Cell, CellStatus } from '../../../core/model.ts';
import { displayText, foldCase, isEmptyValue, numericValue } from '../../../core/rows/cell-values.ts';

/**
 * How cells are stored: input cells in their row's JSON document (`project_rows.cells`), and one
 * typed, index-friendly `cell_keys` record per cell, which filters and sorts read (docs/storage.md).
 */

/** Text keys are indexed up to this many characters; longer text is kept whole beside the key. */
export const TEXT_KEY_CHARS = 255;

/** The typed, index-friendly form of one cell (one `cell_keys` record, minus its address). */
export interface CellKey {
  status: CellStatus;
  is_empty: 0 | 1;
  num_missing: 0 | 1;
  num_key: number | null;
  /** Case-folded (foldCase): the databases compare it byte-wise. */
  text_key: string;
  text_full: string | null;
}

/** The first TEXT_KEY_CHARS UTF-16 units, never splitting a surrogate pair. */
function safePrefix(text: string): string {
  const last = text.charCodeAt(TEXT_KEY_CHARS - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? TEXT_KEY_CHARS - 1 : TEXT_KEY_CHARS);
}

export function cellKey(value: unknown, status: CellStatus): CellKey {
  const empty = isEmptyValue(value);
  const num = empty ? null : numericValue(value);
  const text = foldCase(displayText(value));
  const long = text.length > TEXT_KEY_CHARS;
  return {
    status,
    is_empty: empty ? 1 : 0,
    num_missing: num === null ? 1 : 0,
    num_key: num,
    text_key: long ? safePrefix(text) : text,
    text_full: long ? text : null,
  };
}

/** A cell as stored: value, error and provenance; a tool cell's status is kept with its key (cheap to move). */
export function storedCell(cell: Cell): Cell {
  return { v: cell.v, ...(cell.e ? { e: cell.e } : {}), ...(cell.m ? { m: cell.m } : {}) };
}

export const parseCells = (s: string): Record<string, Cell> => JSON.parse(s) as Record<string, Cell>;
