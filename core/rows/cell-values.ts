/** What a cell's value means to a user: empty or not, numeric or not, the text shown, text compared case-insensitively. */

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
 * What a tool column's value means at a glance: the field the tool produces first (`email` of
 * `{email, confidence, …}`), or the value itself when it is not a record holding that field.
 */
export function primaryValue(value: unknown, field: string | null): unknown {
  if (field === null || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.hasOwn(value, field) ? (value as Record<string, unknown>)[field] : value;
}

/**
 * Case-insensitive comparisons run on folded text: lower case, then NFC, so a letter typed
 * composed ("ü") and one stored decomposed ("u" + U+0308) are the same text; the Greek final sigma
 * folds to σ, as in Unicode case folding ("ΠΡΟΣ" finds "προσφορα"). Stored cells and filter
 * values go through this one function.
 */
export const foldCase = (s: string): string => s.toLowerCase().normalize('NFC').replace(/ς/g, 'σ');
