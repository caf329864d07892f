import type { Group, QueryColumn, Rule, SortRule } from './query-builder.tsx';

/**
 * What a table shows, kept in the page's URL (so a reload, the back button or a link shared with
 * someone opens the same view): the search text, the filter, the sort and the hidden columns.
 *
 *   /projects/{id}?q=acme&filter=<group JSON>&sort=<sort rules JSON>&hide=<col_id>,<col_id>
 */
export interface ViewState {
  q: string;
  filter: Group;
  sort: SortRule[];
  hidden: string[];
}

export const EMPTY_FILTER: Group = { type: 'and', rules: [] };

function parsed<T>(text: string | null, valid: (v: unknown) => v is T, fallback: T): T {
  if (!text) return fallback;
  try {
    const v = JSON.parse(text) as unknown;
    return valid(v) ? v : fallback;
  } catch {
    return fallback; // a hand-edited URL that does not parse opens the table unfiltered
  }
}

const isGroup = (v: unknown): v is Group =>
  typeof v === 'object' && v !== null && ((v as Group).type === 'and' || (v as Group).type === 'or') && Array.isArray((v as Group).rules);
const isSort = (v: unknown): v is SortRule[] =>
  Array.isArray(v) && v.every((s) => typeof s === 'object' && s !== null && typeof (s as SortRule).col_id === 'string');

export function readView(search: string): ViewState {
  const p = new URLSearchParams(search);
  return {
    q: p.get('q') ?? '',
    filter: parsed(p.get('filter'), isGroup, EMPTY_FILTER),
    sort: parsed(p.get('sort'), isSort, []),
    hidden: (p.get('hide') ?? '').split(',').filter(Boolean),
  };
}

/** The view into the URL, in place (a filter typed rule by rule is not a page of history each time). */
export function writeView(v: ViewState): void {
  const p = new URLSearchParams();
  if (v.q) p.set('q', v.q);
  if (v.filter.rules.length) p.set('filter', JSON.stringify(v.filter));
  if (v.sort.length) p.set('sort', JSON.stringify(v.sort));
  if (v.hidden.length) p.set('hide', v.hidden.join(','));
  const search = p.toString();
  history.replaceState(history.state, '', `${location.pathname}${search ? `?${search}` : ''}`);
}

/** Whether the rows shown are a subset: a search or a filter is on. */
export const narrowed = (v: ViewState) => v.q.trim() !== '' || v.filter.rules.length > 0;

/**
 * The query string parts of GET …/rows for a view: the filter, and the search as "any column
 * contains it" beside it (both must hold), then the sort.
 */
export function viewQuery(v: ViewState, columns: QueryColumn[]): string {
  const q = v.q.trim();
  const groups: Group[] = [];
  if (v.filter.rules.length) groups.push(v.filter);
  if (q && columns.length)
    groups.push({ type: 'or', rules: columns.map((c): Rule => ({ col_id: c.col_id, operator: 'contains', value: q })) });
  const parts: string[] = [];
  const filter = groups.length === 1 ? groups : groups.length ? [{ type: 'and', rules: groups }] : [];
  if (filter.length) parts.push(`filter_groups=${encodeURIComponent(JSON.stringify(filter))}`);
  if (v.sort.length) parts.push(`sort_rules=${encodeURIComponent(JSON.stringify(v.sort))}`);
  return parts.join('&');
}

/** The filter_groups/sort_rules of a view, as the export takes them (arrays, not JSON text). */
export function viewBody(v: ViewState, columns: QueryColumn[]): { filter_groups?: unknown[]; sort_rules?: SortRule[] } {
  const p = new URLSearchParams(viewQuery(v, columns));
  const filter = p.get('filter_groups');
  return {
    ...(filter ? { filter_groups: JSON.parse(filter) as unknown[] } : {}),
    ...(v.sort.length ? { sort_rules: v.sort } : {}),
  };
}
