/**
 * The CSV export's guard against formula injection (OWASP, CSV injection), and its inverse for the
 * CSV import: text a spreadsheet would run as a formula is written with a leading `'`, and a file
 * read back gets the text it was exported from.
 */

/** A number as spreadsheets read one (`-12.5`, `+3`, `1e6`): left alone by the guard. */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** The first characters that make a spreadsheet evaluate a cell. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * True when the text, once its leading apostrophes are set aside, starts like a formula and is not
 * a number. Looking past the apostrophes keeps the guard reversible: `'=x` (already guarded by
 * hand) becomes `''=x`, which reads back as `'=x`.
 */
function guarded(text: string): boolean {
  let i = 0;
  while (text.charCodeAt(i) === 39) i++;
  const rest = i === 0 ? text : text.slice(i);
  return FORMULA_START.test(rest) && !NUMBER.test(rest);
}

/** Text a spreadsheet would evaluate (it starts with `=`, `+`, `-`, `@`, a tab or a CR and is not a number), prefixed with `'`. */
export function spreadsheetSafe(text: string): string {
  return guarded(text) ? `'${text}` : text;
}

/** The inverse of `spreadsheetSafe`: the `'` it added is taken off; any other text is left as it is. */
export function fromSpreadsheetSafe(text: string): string {
  return text.charCodeAt(0) === 39 && guarded(text) ? text.slice(1) : text;
}
