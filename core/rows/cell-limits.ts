import type { Config } from '../config.ts';

/** Size bounds of what is stored and answered (MAX_CELL_BYTES, MAX_ROW_BYTES, MAX_PAGE_BYTES). */
export type SizeLimits = Config['limits'];

const number = (n: number) => n.toLocaleString('en-US');

/** A number JSON cannot carry (`1e309` parses to Infinity), anywhere inside a value. */
function hasNonFinite(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(hasNonFinite);
  if (value && typeof value === 'object') return Object.values(value).some(hasNonFinite);
  return false;
}

/** Bytes of a value as stored (its JSON, UTF-8). */
export function valueBytes(value: unknown): number {
  if (value === null || value === undefined) return 0;
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * Why a value cannot be stored in a cell, or null when it can: a number JSON cannot carry exactly
 * would come back as `null`, and a value over MAX_CELL_BYTES would make every page that holds it heavy.
 */
export function cellValueProblem(value: unknown, limits: SizeLimits): string | null {
  if (hasNonFinite(value)) return 'holds a number JSON cannot carry exactly (an overflow such as 1e309); send it as a string';
  const bytes = valueBytes(value);
  if (bytes > limits.cellBytes) {
    return `holds ${number(bytes)} bytes, over the ${number(limits.cellBytes)}-byte limit of a cell (MAX_CELL_BYTES); store large data elsewhere and keep a link`;
  }
  return null;
}

/** The first problem of a row's values by column name, with the column it is in (null: the row fits). */
export function rowValuesProblem(
  values: Iterable<[string, unknown]>,
  limits: SizeLimits,
): { column: string | null; message: string } | null {
  let total = 0;
  for (const [column, value] of values) {
    const problem = cellValueProblem(value, limits);
    if (problem) return { column, message: `Column "${column}" ${problem}` };
    total += valueBytes(value);
  }
  if (total > limits.rowBytes) {
    return {
      column: null,
      message: `The row holds ${number(total)} bytes, over the ${number(limits.rowBytes)}-byte limit of a row (MAX_ROW_BYTES)`,
    };
  }
  return null;
}

/**
 * About how many bytes a value adds to a page's JSON (strings by their UTF-8 length, other values by
 * their JSON): cheap enough for every listing, close enough for a bound counted in megabytes.
 */
export function approximateValueSize(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') + 2;
  if (value === null || value === undefined || typeof value !== 'object') return 8;
  return JSON.stringify(value)?.length ?? 0;
}
