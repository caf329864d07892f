import { displayText } from '../rows/cell-values.ts';

/** `{{Column Name}}` inside a tool column's config: the row's value of that column. */
const TEMPLATE = /\{\{\s*([^{}]+?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]+?)\s*\}\}$/;

/** Every column name referenced anywhere in a config value (strings inside objects and arrays too). */
export function referencedColumns(value: unknown, into = new Set<string>()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(TEMPLATE)) into.add(m[1] as string);
  else if (Array.isArray(value)) for (const v of value) referencedColumns(v, into);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) referencedColumns(v, into);
  return into;
}

/**
 * Renders a config over one row. A string that is exactly one template takes the value with its
 * type (a number stays a number); templates inside longer text are replaced by the value's text.
 */
export function renderTemplate(value: unknown, row: Record<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return row[whole[1] as string] ?? null;
    return value.replace(TEMPLATE, (_, name: string) => displayText(row[name]));
  }
  if (Array.isArray(value)) return value.map((v) => renderTemplate(v, row));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplate(v, row)]));
  }
  return value;
}

/** A config with every `{{from}}` template (blanks inside the braces allowed) naming `to` instead; the rest as it was. */
export function renameTemplates(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value.replace(TEMPLATE, (whole, name: string) => (name === from ? `{{${to}}}` : whole));
  if (Array.isArray(value)) return value.map((v) => renameTemplates(v, from, to));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renameTemplates(v, from, to)]));
  }
  return value;
}

/** A text with its `{{Column}}` templates replaced by `by` (what an expression reads once they are rendered). */
export const withoutTemplates = (text: string, by: string): string => text.replace(TEMPLATE, by);
