import { type FieldError, ServiceError } from '../errors.ts';

/**
 * JSON parsing that refuses a number it would change: `12345678901234567890` reads as
 * 12345678901234567000 and `1e309` as Infinity (stored later as null) — both silently, with plain
 * JSON.parse. Both doors parse client JSON with it, so such a number is a clear error, never data.
 */

/** A decimal number written canonically (sign, digits without outer zeros, exponent), to compare values not spellings. */
function decimalKey(text: string): string | null {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return null;
  const fraction = m[3] ?? '';
  let digits = `${m[2]}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = Number(m[4] ?? 0) - fraction.length;
  const kept = digits.replace(/0+$/, '');
  exponent += digits.length - kept.length;
  digits = kept;
  return `${m[1]}${digits}e${exponent}`;
}

/** Whether the number read from `source` says exactly what `source` says. */
function readsExactly(value: number, source: string): boolean {
  if (!Number.isFinite(value)) return false;
  return decimalKey(source) === decimalKey(String(value));
}

/** Numbers of 15 significant digits or fewer, with a small exponent, always read exactly: most bodies need no closer look. */
const MAYBE_INEXACT = /\d{16}|[eE][+-]?\d{3}/;

export interface InexactNumber {
  /** The key the number sits under (a column name in a row), or '' at the top. */
  key: string;
  source: string;
}

/** Arrays and objects one JSON document may nest: far more than any row, form or argument needs. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether the text nests arrays and objects at most `max` deep: one pass, no recursion, so a body
 * of a million `[` is refused in a millisecond instead of overflowing a stack further on.
 */
function nestsWithin(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return false;
    } else if (c === 93 || c === 125) depth--;
  }
  return true;
}

/**
 * Parses JSON text (throwing SyntaxError when it is not JSON, or nests deeper than MAX_JSON_DEPTH);
 * answers the first number it would change, if any.
 */
export function parseJsonExactly(text: string): { value: unknown; inexact: InexactNumber | null } {
  if (!nestsWithin(text, MAX_JSON_DEPTH)) throw new SyntaxError(`it nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`);
  if (!MAYBE_INEXACT.test(text)) return { value: JSON.parse(text), inexact: null };
  let inexact: InexactNumber | null = null;
  const value = JSON.parse(text, (key, v: unknown, context?: { source?: string }) => {
    if (inexact === null && typeof v === 'number' && context?.source !== undefined && !readsExactly(v, context.source)) {
      inexact = { key, source: context.source };
    }
    return v;
  });
  return { value, inexact };
}

/** The refusal of a number JSON cannot carry exactly, in a body or in a `*_json` argument named `where`. */
export function inexactNumberError(where: string, found: InexactNumber, status: number): ServiceError {
  const shown = found.source.length > 40 ? `${found.source.slice(0, 40)}…` : found.source;
  const under = found.key === '' ? '' : ` under "${found.key.slice(0, 200)}"`;
  const message = `${where} holds ${shown}${under}, a number JSON cannot carry exactly (it would be stored as ${JSON.stringify(Number(found.source))}); send it as a string`;
  const errors: FieldError[] = [{ path: found.key, message: 'is a number JSON cannot carry exactly' }];
  return new ServiceError('validation_error', { message, errors }, { status });
}
