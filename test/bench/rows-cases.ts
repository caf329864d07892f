import type { Column } from '../../core/model.ts';
import { parseFilterGroups, parseSortRules } from '../../core/rows/filter-parse.ts';
import type { RowPageQuery } from '../../core/ports/storage.ts';
import { NAME_NEEDLE } from './rows-dataset.ts';

/** The four row-listing shapes the issue asks for, with their latency targets (MariaDB, HTTP). */
export type CaseKey = 'a' | 'b' | 'c' | 'd';

export interface BenchCase {
  key: CaseKey;
  label: string;
  targetMs: number;
  filterGroups: string | undefined;
  sortRules: string | undefined;
}

export const PAGE_SIZE = 50;
export const DEEP_PAGE = 500;
/** Deep page: page 500 may take at most this many times page 1 (p50, HTTP). */
export const DEEP_PAGE_MAX_RATIO = 2;

function byName(columns: Column[], name: string): Column {
  const c = columns.find((x) => x.name === name);
  if (!c) throw new Error(`bench project has no column "${name}"`);
  return c;
}

export function benchCases(columns: Column[]): BenchCase[] {
  const filter = JSON.stringify([
    { type: 'and', rules: [{ col_id: byName(columns, 'name').id, operator: 'contains', value: NAME_NEEDLE }] },
  ]);
  const sort = JSON.stringify([{ col_id: byName(columns, 'employees').id, direction: 'asc', sort_as_number: true }]);
  return [
    { key: 'a', label: '(a) no filter', targetMs: 10, filterGroups: undefined, sortRules: undefined },
    { key: 'b', label: `(b) name contains "${NAME_NEEDLE}"`, targetMs: 15, filterGroups: filter, sortRules: undefined },
    { key: 'c', label: '(c) sort employees (number)', targetMs: 15, filterGroups: undefined, sortRules: sort },
    { key: 'd', label: '(d) filter + sort', targetMs: 30, filterGroups: filter, sortRules: sort },
  ];
}

/** The query string of GET /projects/{id}/rows for one case and page. */
export function httpQuery(c: BenchCase, page: number): string {
  const parts = [`page=${page}`, `page_size=${PAGE_SIZE}`];
  if (c.filterGroups) parts.push(`filter_groups=${encodeURIComponent(c.filterGroups)}`);
  if (c.sortRules) parts.push(`sort_rules=${encodeURIComponent(c.sortRules)}`);
  return parts.join('&');
}

/** The repository query the service builds for the same request (same parser as listRows). */
export function pageQuery(c: BenchCase, columns: Column[], projectPk: number, page: number): RowPageQuery {
  return {
    projectPk,
    filter: parseFilterGroups(c.filterGroups, columns),
    sort: parseSortRules(c.sortRules, columns),
    limit: PAGE_SIZE,
    offset: (page - 1) * PAGE_SIZE,
  };
}
