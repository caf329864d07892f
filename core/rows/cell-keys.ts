import type { CellStatus } from '../model.ts';

/** Text keys are indexed up to this many characters; longer text is kept whole beside the key. */
export const TEXT_KEY_CHARS = 255;

/** The typed, index-friendly form of one cell (one `cell_keys` record, minus its address). */
export interface CellKey {
  status: CellStatus;
  is_empty: 0 | 1;
  num_missing: 0 | 1;
  num_key: number | null;
  text_key: string;
  text_full: string | null;
}

/** `null`, `""`, whitespace-only text and `[]` are empty, as a spreadsheet user expects. */
export function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/** A number, or a string that is exactly one ("12", " 3.5 ", "-1e3"); anything else is not numeric. */
export function numericValue(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') {
    const t = value.trim();
    if (t === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return null;
    const n = Number(t);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** The text a user sees for a value: arrays join with ", ", objects are JSON. */
export function displayText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(', ');
  return JSON.stringify(value);
}

/**
 * Case-insensitive comparisons run on folded text in both dialects (byte-wise collation): lower
 * case, then NFC, so a letter typed composed ("ü") and one stored decomposed ("u" + U+0308) are the
 * same text; the Greek final sigma folds to σ, as in Unicode case folding ("ΠΡΟΣ" finds "προσφορα").
 * Cell keys and filter values go through this one function.
 */
export const foldCase = (s: string): string => s.toLowerCase().normalize('NFC').replace(/ς/g, 'σ');

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
