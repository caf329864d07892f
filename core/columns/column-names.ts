import type { FieldError } from '../errors.ts';

/**
 * Names a column may not have: a row is an object keyed by column names in every answer and every
 * plugin's input, and these keys would set its prototype or hide its constructor instead of holding
 * a value.
 */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

/** Columns one project holds at most (input and tool columns): a header wider than this is refused before anything is stored. */
export const MAX_COLUMNS_PER_PROJECT = 1_000;

/** Problems of column names about to be added to a project that holds `existing` columns; checked in one pass. */
export function columnNameProblems(names: readonly string[], existing: number, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (existing + names.length > MAX_COLUMNS_PER_PROJECT) {
    errors.push({
      path,
      message: `a project holds at most ${MAX_COLUMNS_PER_PROJECT.toLocaleString('en-US')} columns; this would make ${(existing + names.length).toLocaleString('en-US')}`,
    });
    return errors;
  }
  for (const name of names) {
    if (RESERVED.has(name))
      errors.push({ path, message: `"${name}" cannot name a column; rename it (e.g. "${name.replace(/_/g, '')} value")` });
  }
  return errors;
}
