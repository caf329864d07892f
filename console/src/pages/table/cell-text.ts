/** How a cell's value reads in one line: the grid, the row detail and the selected rows' CSV all show it so. */

/** A record in a list, by what names it (a technology's name, a person's title), else whole. */
const itemText = (x: unknown): string => {
  if (typeof x !== 'object' || x === null) return String(x);
  const r = x as Record<string, unknown>;
  const label = ['name', 'title', 'value', 'email', 'url'].map((k) => r[k]).find((v) => typeof v === 'string' || typeof v === 'number');
  return label === undefined ? JSON.stringify(x) : String(label);
};

/** A value as one line of text: lists joined (their records by name), records as JSON (their detail shows them whole). */
export const text = (v: unknown): string =>
  v === null || v === undefined
    ? ''
    : Array.isArray(v)
      ? v.map(itemText).join(', ')
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

/** What a tool value means at a glance: its primary field when it is a record holding it (as exports write it). */
export function primaryValue(value: unknown, field: string | null | undefined): unknown {
  if (!field || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.hasOwn(value, field) ? (value as Record<string, unknown>)[field] : value;
}
