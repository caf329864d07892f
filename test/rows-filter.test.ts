import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { enc, startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

/**
 * Filtering and sorting rows over real HTTP (docs/api.md). Rows are named by their `Label`
 * cell, so every assertion lists exactly which rows match, in the order the API returns them.
 */

// An empty field stays unquoted: the import reads it as an empty cell (a quoted "" is the empty text).
const csvField = (v: string): string => (v === '' ? '' : `"${v.replace(/"/g, '""')}"`);
const csv = (header: string[], rows: string[][]): string => [header, ...rows].map((r) => r.map(csvField).join(',')).join('\n');

// A text longer than the 255 characters a text key indexes; the interesting part is past the cut.
const LONG = `Long note ${'x'.repeat(280)} Tail Marker END`;

/**
 * The filter fixture, in insertion order. r1–r7 come from the CSV import (an empty CSV field is a
 * null cell); r8 and r9 are added over the API to hold `""`, `[]` and a real JSON number.
 *
 *        Name                Score      Note
 *   r1   Acme Corp           "12"       100% organic
 *   r2   acme labs           "3.5"      a_b
 *   r3   Beta GmbH           "9"        axb
 *   r4   Zürich Holdings     "10"       null
 *   r5   ÉCOLE Supérieure    "-2"       🚀 launch day
 *   r6   Rocket 🚀           "n/a"      LONG (> 255 chars)
 *   r7   null                null       C:\temp
 *   r8   ""                  7          []
 *   r9   []                  ""         ACME mention
 */
const CSV_ROWS: string[][] = [
  ['r1', 'Acme Corp', '12', '100% organic'],
  ['r2', 'acme labs', '3.5', 'a_b'],
  ['r3', 'Beta GmbH', '9', 'axb'],
  ['r4', 'Zürich Holdings', '10', ''],
  ['r5', 'ÉCOLE Supérieure', '-2', '🚀 launch day'],
  ['r6', 'Rocket 🚀', 'n/a', LONG],
  ['r7', '', '', 'C:\\temp'],
];
const API_ROWS: Record<string, unknown>[] = [
  { Label: 'r8', Name: '', Score: 7, Note: [] },
  { Label: 'r9', Name: [], Score: '', Note: 'ACME mention' },
];
const ALL = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'r8', 'r9'];

type Rule = { col_id: string; operator: string; value?: unknown; field?: string };
type Group = { type: 'and' | 'or'; rules: (Rule | Group)[] };
const and = (...rules: (Rule | Group)[]): Group => ({ type: 'and', rules });
const or = (...rules: (Rule | Group)[]): Group => ({ type: 'or', rules });

interface Fixture {
  id: string;
  col: Record<string, string>;
}

async function csvProject(t: TestService, header: string[], rows: string[][]): Promise<Fixture> {
  const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv(header, rows) } } });
  expect(r.status).toBe(201);
  const details = await waitForBuilder(t, r.body.project_id);
  expect(details.builder_status.type).toBe('completed');
  expect(details.row_count).toBe(rows.length);
  return { id: r.body.project_id, col: Object.fromEntries(details.columns.map((c: any) => [c.name, c.col_id])) };
}

async function addRow(t: TestService, p: Fixture, company: Record<string, unknown>): Promise<void> {
  const r = await t.api('POST', `/projects/${p.id}/rows`, { body: { company } });
  expect(r.status).toBe(201);
}

interface ListQuery {
  filter?: unknown;
  sort?: unknown;
  page?: number;
  page_size?: number;
  /** Raw (already encoded) query values, for malformed input. */
  rawFilter?: string;
  rawSort?: string;
}

function rowsPath(p: Fixture, q: ListQuery): string {
  const params = [`page=${q.page ?? 1}`, `page_size=${q.page_size ?? 100}`];
  if (q.filter !== undefined) params.push(`filter_groups=${enc(q.filter)}`);
  if (q.rawFilter !== undefined) params.push(`filter_groups=${q.rawFilter}`);
  if (q.sort !== undefined) params.push(`sort_rules=${enc(q.sort)}`);
  if (q.rawSort !== undefined) params.push(`sort_rules=${q.rawSort}`);
  return `/projects/${p.id}/rows?${params.join('&')}`;
}

/**
 * GET rows with this query; when it holds no raw URL text, also POST rows/search with the same
 * filters in a body, which must answer exactly alike (status and body) — every case of this suite
 * checks both ways in.
 */
async function getRows(t: TestService, p: Fixture, q: ListQuery): Promise<{ status: number; body: any }> {
  const r = await t.api('GET', rowsPath(p, q));
  if (q.rawFilter === undefined && q.rawSort === undefined) {
    const body = { page: q.page ?? 1, page_size: q.page_size ?? 100, filter_groups: q.filter, sort_rules: q.sort };
    const searched = await t.api('POST', `/projects/${p.id}/rows/search`, { body });
    expect({ status: searched.status, body: searched.body }).toEqual({ status: r.status, body: r.body });
  }
  return r;
}

async function list(t: TestService, p: Fixture, q: ListQuery): Promise<any> {
  const r = await getRows(t, p, q);
  if (r.status !== 200) throw new Error(`GET rows answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const labels = (body: any): string[] => body.rows.map((row: any) => row.company.Label.value);

describe.each(DIALECTS)('filtering and sorting rows on %s', (dialect) => {
  let t: TestService;
  let p: Fixture;
  /** Column ids of the filter fixture by name. */
  let Name: string;
  let Score: string;
  let Note: string;

  /** Labels of every row matching these top-level groups, in the order listed. */
  const where = async (...groups: Group[]): Promise<string[]> => labels(await list(t, p, { filter: groups }));
  /** Labels of every row matching one rule. */
  const matching = (col_id: string, operator: string, value?: unknown, extra: Partial<Rule> = {}): Promise<string[]> =>
    where(and({ col_id, operator, ...(value === undefined ? {} : { value }), ...extra }));
  const rule = (col_id: string, operator: string, value?: unknown): Rule => ({
    col_id,
    operator,
    ...(value === undefined ? {} : { value }),
  });
  const except = (...out: string[]): string[] => ALL.filter((l) => !out.includes(l));

  beforeAll(async () => {
    t = await startTestService(dialect);
    p = await csvProject(t, ['Label', 'Name', 'Score', 'Note'], CSV_ROWS);
    for (const company of API_ROWS) await addRow(t, p, company);
    ({ Name, Score, Note } = p.col as { Name: string; Score: string; Note: string });
  });
  afterAll(() => t.stop());

  test('the fixture holds the values the tests rely on', async () => {
    const body = await list(t, p, {});
    expect(labels(body)).toEqual(ALL);
    const byLabel = Object.fromEntries(body.rows.map((r: any) => [r.company.Label.value, r.company]));
    expect(byLabel.r4.Note.value).toBeNull();
    expect(byLabel.r6.Note.value).toBe(LONG);
    expect(byLabel.r7.Name.value).toBeNull();
    expect(byLabel.r8.Name.value).toBe('');
    expect(byLabel.r8.Score.value).toBe(7);
    expect(byLabel.r8.Note.value).toEqual([]);
    expect(byLabel.r9.Name.value).toEqual([]);
  });

  describe('eq / neq', () => {
    test('eq matches whole text, ignoring case', async () => {
      expect(await matching(Name, 'eq', 'ACME CORP')).toEqual(['r1']);
    });

    test('eq ignores case of accented letters', async () => {
      expect(await matching(Name, 'eq', 'zürich HOLDINGS')).toEqual(['r4']);
      expect(await matching(Name, 'eq', 'école supérieure')).toEqual(['r5']);
    });

    test('eq does not match a part of the text', async () => {
      expect(await matching(Name, 'eq', 'acme')).toEqual([]);
    });

    test('eq with a number matches cells holding that number, as text or as a number', async () => {
      expect(await matching(Score, 'eq', 10)).toEqual(['r4']);
      expect(await matching(Score, 'eq', 7)).toEqual(['r8']);
      expect(await matching(Score, 'eq', 3.5)).toEqual(['r2']);
    });

    test('eq with a numeric string matches the text', async () => {
      expect(await matching(Score, 'eq', '3.5')).toEqual(['r2']);
      expect(await matching(Score, 'eq', '7')).toEqual(['r8']);
    });

    test('eq matches a long text in full, and not by its first 255 characters', async () => {
      expect(await matching(Note, 'eq', LONG.toUpperCase())).toEqual(['r6']);
      expect(await matching(Note, 'eq', LONG.slice(0, 255))).toEqual([]);
    });

    test('neq matches every other row, empty cells included', async () => {
      expect(await matching(Name, 'neq', 'acme corp')).toEqual(except('r1'));
    });

    test('neq with a number also matches non-numeric and empty cells', async () => {
      expect(await matching(Score, 'neq', 12)).toEqual(except('r1'));
    });

    test('neq on a long text excludes only that text', async () => {
      expect(await matching(Note, 'neq', LONG)).toEqual(except('r6'));
    });
  });

  describe('contains / not_contains', () => {
    test('contains finds a substring, ignoring case', async () => {
      expect(await matching(Name, 'contains', 'ACME')).toEqual(['r1', 'r2']);
    });

    test('contains finds accented letters in either case', async () => {
      expect(await matching(Name, 'contains', 'ÜRICH')).toEqual(['r4']);
      expect(await matching(Name, 'contains', 'éRIEU')).toEqual(['r5']);
    });

    test('contains finds an emoji', async () => {
      expect(await matching(Name, 'contains', '🚀')).toEqual(['r6']);
      expect(await matching(Note, 'contains', '🚀')).toEqual(['r5']);
    });

    test('% and _ in the value are literal characters, not wildcards', async () => {
      expect(await matching(Note, 'contains', '%')).toEqual(['r1']);
      expect(await matching(Note, 'contains', '_')).toEqual(['r2']);
      expect(await matching(Note, 'contains', 'a_b')).toEqual(['r2']);
    });

    test('a backslash in the value is a literal character', async () => {
      expect(await matching(Note, 'contains', 'c:\\te')).toEqual(['r7']);
      expect(await matching(Note, 'contains', '\\')).toEqual(['r7']);
    });

    test('contains finds text past the first 255 characters of a long cell', async () => {
      expect(await matching(Note, 'contains', 'tail marker')).toEqual(['r6']);
    });

    test('contains with a number looks for its digits', async () => {
      expect(await matching(Score, 'contains', 5)).toEqual(['r2']);
    });

    test('not_contains matches the rows without the text, empty cells included', async () => {
      expect(await matching(Name, 'not_contains', 'Acme')).toEqual(except('r1', 'r2'));
    });

    test('not_contains looks past the first 255 characters of a long cell', async () => {
      expect(await matching(Note, 'not_contains', 'MARKER')).toEqual(except('r6'));
    });

    test('not_contains treats _ literally', async () => {
      expect(await matching(Note, 'not_contains', 'a_b')).toEqual(except('r2'));
    });
  });

  describe('starts_with / ends_with', () => {
    test('starts_with matches the beginning, ignoring case', async () => {
      expect(await matching(Name, 'starts_with', 'aCmE')).toEqual(['r1', 'r2']);
      expect(await matching(Name, 'starts_with', 'École')).toEqual(['r5']);
    });

    test('starts_with does not match text in the middle', async () => {
      expect(await matching(Name, 'starts_with', 'corp')).toEqual([]);
    });

    test('starts_with treats _ and % literally', async () => {
      expect(await matching(Note, 'starts_with', 'a_')).toEqual(['r2']);
      expect(await matching(Note, 'starts_with', '100%')).toEqual(['r1']);
      expect(await matching(Note, 'starts_with', '%')).toEqual([]);
    });

    test('starts_with a prefix longer than 255 characters matches the long cell', async () => {
      expect(await matching(Note, 'starts_with', LONG.slice(0, 270).toUpperCase())).toEqual(['r6']);
      expect(await matching(Note, 'starts_with', `${LONG.slice(0, 270)}zzz`)).toEqual([]);
    });

    test('ends_with matches the end, ignoring case', async () => {
      expect(await matching(Name, 'ends_with', 'GMBH')).toEqual(['r3']);
      expect(await matching(Name, 'ends_with', 'ich holdings')).toEqual(['r4']);
    });

    test('ends_with matches an emoji at the end', async () => {
      expect(await matching(Name, 'ends_with', '🚀')).toEqual(['r6']);
    });

    test('ends_with looks at the end of a long cell', async () => {
      expect(await matching(Note, 'ends_with', 'marker end')).toEqual(['r6']);
    });

    test('ends_with treats % literally', async () => {
      expect(await matching(Note, 'ends_with', '%')).toEqual([]);
      expect(await matching(Note, 'ends_with', '% organic')).toEqual(['r1']);
    });
  });

  describe('gt / gte / lt / lte', () => {
    test('a number compares numerically ("10" and "12" are greater than 9)', async () => {
      expect(await matching(Score, 'gt', 9)).toEqual(['r1', 'r4']);
    });

    test('a numeric string compares numerically too', async () => {
      expect(await matching(Score, 'gt', '9')).toEqual(['r1', 'r4']);
      expect(await matching(Score, 'gte', '9')).toEqual(['r1', 'r3', 'r4']);
    });

    test('lt and lte compare numbers, including decimals, negatives and JSON numbers', async () => {
      expect(await matching(Score, 'lt', 7)).toEqual(['r2', 'r5']);
      expect(await matching(Score, 'lte', 7)).toEqual(['r2', 'r5', 'r8']);
      expect(await matching(Score, 'lte', '-2')).toEqual(['r5']);
      expect(await matching(Score, 'gt', 3.49)).toEqual(['r1', 'r2', 'r3', 'r4', 'r8']);
    });

    test('empty and non-numeric cells never match a numeric comparison', async () => {
      expect(await matching(Score, 'lt', 1000)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r8']);
      expect(await matching(Score, 'gt', -1000)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r8']);
    });

    test('a non-numeric value compares as case-insensitive text', async () => {
      // As text, digits and "-" sort before letters: only "n/a" is after "a".
      expect(await matching(Score, 'gt', 'A')).toEqual(['r6']);
      expect(await matching(Name, 'lt', 'B')).toEqual(['r1', 'r2']);
      expect(await matching(Name, 'lte', 'BETA GMBH')).toEqual(['r1', 'r2', 'r3']);
    });

    test('a text comparison never matches empty cells', async () => {
      expect(await matching(Name, 'lt', 'azzz')).toEqual(['r1', 'r2']);
      expect(await matching(Note, 'lte', 'a_b')).toEqual(['r1', 'r2']);
    });

    test('gte on text includes the equal text', async () => {
      expect(await matching(Note, 'gte', 'axb')).toEqual(['r3', 'r5', 'r6', 'r7']);
    });
  });

  describe('is_empty / is_not_empty', () => {
    test('is_empty matches null, "" and [] cells', async () => {
      expect(await matching(Name, 'is_empty')).toEqual(['r7', 'r8', 'r9']);
      expect(await matching(Note, 'is_empty')).toEqual(['r4', 'r8']);
      expect(await matching(Score, 'is_empty')).toEqual(['r7', 'r9']);
    });

    test('is_not_empty matches every other cell', async () => {
      expect(await matching(Name, 'is_not_empty')).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
      expect(await matching(Note, 'is_not_empty')).toEqual(except('r4', 'r8'));
    });

    test('a null value is ignored', async () => {
      expect(await matching(Name, 'is_empty', null)).toEqual(['r7', 'r8', 'r9']);
      expect(await matching(Name, 'is_not_empty', null)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    });
  });

  describe('in / not_in', () => {
    test('in matches any listed text, ignoring case', async () => {
      expect(await matching(Name, 'in', ['ACME CORP', 'zürich HOLDINGS', 'nobody'])).toEqual(['r1', 'r4']);
    });

    test('in needs whole-text matches', async () => {
      expect(await matching(Name, 'in', ['acme', 'beta'])).toEqual([]);
    });

    test('in with numbers matches cells holding those numbers as text or as numbers', async () => {
      expect(await matching(Score, 'in', [12, 7])).toEqual(['r1', 'r8']);
    });

    test('in matches a long text in full', async () => {
      expect(await matching(Note, 'in', [LONG.toLowerCase(), 'axb'])).toEqual(['r3', 'r6']);
    });

    test('not_in matches every row not listed, empty cells included', async () => {
      expect(await matching(Name, 'not_in', ['ACME CORP', 'zürich HOLDINGS', 'nobody'])).toEqual(except('r1', 'r4'));
    });

    test('not_in with numbers excludes those numbers only', async () => {
      expect(await matching(Score, 'not_in', ['12', 7])).toEqual(except('r1', 'r8'));
    });
  });

  describe('field "status"', () => {
    test('input cells have status "default"', async () => {
      expect(await matching(Name, 'eq', 'default', { field: 'status' })).toEqual(ALL);
      expect(await matching(Name, 'eq', 'DEFAULT', { field: 'status' })).toEqual(ALL);
    });

    test('no input cell has another status', async () => {
      expect(await matching(Name, 'neq', 'default', { field: 'status' })).toEqual([]);
      expect(await matching(Name, 'in', ['completed', 'error'], { field: 'status' })).toEqual([]);
      expect(await matching(Name, 'not_in', ['completed', 'error'], { field: 'status' })).toEqual(ALL);
    });

    test('field "value" is the default', async () => {
      expect(await matching(Name, 'eq', 'default', { field: 'value' })).toEqual([]);
      expect(await matching(Name, 'eq', 'acme corp', { field: 'value' })).toEqual(['r1']);
    });
  });

  describe('groups', () => {
    test('rules of an "and" group must all match', async () => {
      expect(await where(and(rule(Name, 'contains', 'acme'), rule(Score, 'lt', 5)))).toEqual(['r2']);
    });

    test('rules of an "or" group match when any one does', async () => {
      expect(await where(or(rule(Name, 'eq', 'beta gmbh'), rule(Score, 'eq', 10)))).toEqual(['r3', 'r4']);
    });

    test('top-level groups combine with AND', async () => {
      expect(await where(and(rule(Name, 'contains', 'acme')), and(rule(Score, 'lt', 5)))).toEqual(['r2']);
      expect(await where(or(rule(Name, 'contains', 'acme')), or(rule(Score, 'lt', 5)))).toEqual(['r2']);
    });

    test('an "or" group nested in an "and" group', async () => {
      const groups = and(rule(Note, 'is_not_empty'), or(rule(Name, 'contains', 'acme'), rule(Score, 'lt', 0)));
      expect(await where(groups)).toEqual(['r1', 'r2', 'r5']);
    });

    test('an "and" group nested in an "or" group nested in an "and" group', async () => {
      const groups = and(
        or(and(rule(Name, 'starts_with', 'acme'), rule(Score, 'gte', 12)), rule(Name, 'contains', 'ZÜRICH')),
        rule(Note, 'is_empty'),
      );
      expect(await where(groups)).toEqual(['r4']);
    });

    test('nesting four groups deep', async () => {
      const groups = or(and(or(and(rule(Name, 'contains', 'acme'), rule(Note, 'contains', '_')))), rule(Score, 'eq', 9));
      expect(await where(groups)).toEqual(['r2', 'r3']);
    });

    test('a group with no rules matches every row', async () => {
      expect(await where(and())).toEqual(ALL);
      expect(await where(or(), and(rule(Score, 'eq', 9)))).toEqual(['r3']);
    });

    test('an empty filter_groups array (or an empty parameter) matches every row', async () => {
      expect(labels(await list(t, p, { filter: [] }))).toEqual(ALL);
      expect(labels(await list(t, p, { rawFilter: '' }))).toEqual(ALL);
    });
  });

  describe('totals and paging of filtered rows', () => {
    const notes = () => [and(rule(Note, 'is_not_empty'))]; // r1 r2 r3 r5 r6 r7 r9

    test('total_rows counts every match, not just the page', async () => {
      const body = await list(t, p, { filter: notes(), page_size: 2 });
      expect(labels(body)).toEqual(['r1', 'r2']);
      expect(body.total_rows).toBe(7);
      expect(body.total_pages).toBe(4);
    });

    test('pages walk through the matches in order without gaps or repeats', async () => {
      const pages = [];
      for (let page = 1; page <= 3; page++) pages.push(labels(await list(t, p, { filter: notes(), page, page_size: 3 })));
      expect(pages).toEqual([['r1', 'r2', 'r3'], ['r5', 'r6', 'r7'], ['r9']]);
    });

    test('a page past the last match is empty but still reports the totals', async () => {
      const body = await list(t, p, { filter: notes(), page: 4, page_size: 3 });
      expect(body.rows).toEqual([]);
      expect(body.page).toBe(4);
      expect(body.total_rows).toBe(7);
      expect(body.total_pages).toBe(3);
    });

    test('a filter that matches nothing reports zero rows and zero pages', async () => {
      const body = await list(t, p, { filter: [and(rule(Name, 'eq', 'nobody'))] });
      expect(body.rows).toEqual([]);
      expect(body.total_rows).toBe(0);
      expect(body.total_pages).toBe(0);
    });

    test('filtered rows carry every cell, not only the filtered ones', async () => {
      const body = await list(t, p, { filter: [and(rule(Name, 'eq', 'beta gmbh'))] });
      expect(body.rows).toHaveLength(1);
      const row = body.rows[0];
      expect(row.project_id).toBe(p.id);
      expect(row.company).toEqual({
        Label: { name: 'Label', value: 'r3', status: 'default', is_loading: false },
        Name: { name: 'Name', value: 'Beta GmbH', status: 'default', is_loading: false },
        Score: { name: 'Score', value: '9', status: 'default', is_loading: false },
        Note: { name: 'Note', value: 'axb', status: 'default', is_loading: false },
      });
      const one = await t.api('GET', `/projects/${p.id}/rows/${row.id}`);
      expect(one.body).toEqual(row);
    });
  });

  describe('filter and sort together', () => {
    test('sorting applies to the matches only, and totals count the matches', async () => {
      const body = await list(t, p, {
        filter: [and(rule(Score, 'is_not_empty'))],
        sort: [{ col_id: Score, direction: 'desc', sort_as_number: true }],
        page_size: 4,
      });
      expect(labels(body)).toEqual(['r1', 'r4', 'r3', 'r8']);
      expect(body.total_rows).toBe(7);
      expect(body.total_pages).toBe(2);
      expect(
        labels(
          await list(t, p, {
            filter: [and(rule(Score, 'is_not_empty'))],
            sort: [{ col_id: Score, direction: 'desc', sort_as_number: true }],
            page: 2,
            page_size: 4,
          }),
        ),
      ).toEqual(['r2', 'r5', 'r6']);
    });

    test('a filter on one column with a sort on another', async () => {
      const body = await list(t, p, {
        filter: [or(rule(Name, 'contains', 'acme'), rule(Name, 'contains', 'ü'), rule(Name, 'contains', 'beta'))],
        sort: [{ col_id: Score, direction: 'asc', sort_as_number: true }],
      });
      expect(labels(body)).toEqual(['r2', 'r3', 'r4', 'r1']);
    });
  });

  describe('422 for bad filter_groups', () => {
    const bad = async (q: ListQuery) => {
      const r = await getRows(t, p, q);
      expect(r.status).toBe(422);
      return r.body.detail;
    };
    const paths = (detail: any): string[] => detail.errors.map((e: any) => e.path);

    test('invalid JSON', async () => {
      const detail = await bad({ rawFilter: encodeURIComponent('[{"type": "and",') });
      expect(detail.message).toContain('filter_groups is not valid JSON');
      expect(paths(detail)).toEqual(['filter_groups']);
    });

    test('JSON that is not an array', async () => {
      const detail = await bad({ filter: and(rule(Name, 'eq', 'x')) });
      expect(detail.message).toContain('must be a JSON array');
      expect(paths(detail)).toEqual(['filter_groups']);
    });

    test('a group without rules', async () => {
      const detail = await bad({ filter: [{ type: 'and' }] });
      expect(paths(detail)).toEqual(['filter_groups[0]']);
      expect(detail.message).toContain('must be a group');
    });

    test('a nested group without rules', async () => {
      const detail = await bad({ filter: [and({ type: 'or' } as Group)] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].rules']);
      expect(detail.message).toContain('must be an array');
    });

    test('rules that are not an array', async () => {
      const detail = await bad({ filter: [{ type: 'and', rules: rule(Name, 'eq', 'x') }] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules']);
    });

    test('a rule at the top level instead of inside a group', async () => {
      const detail = await bad({ filter: [rule(Name, 'eq', 'x')] });
      expect(paths(detail)).toEqual(['filter_groups[0]']);
    });

    test('a group that is not an object', async () => {
      const detail = await bad({ filter: ['and'] });
      expect(paths(detail)).toEqual(['filter_groups[0]']);
      expect(detail.message).toContain('must be an object');
    });

    test('an unknown group type', async () => {
      const detail = await bad({ filter: [{ type: 'xor', rules: [rule(Name, 'eq', 'x')] }] });
      expect(paths(detail)).toEqual(['filter_groups[0].type']);
      expect(detail.message).toContain('must be "and" or "or"');
    });

    test('an unknown operator', async () => {
      const detail = await bad({ filter: [and(rule(Name, 'like', 'x'))] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].operator']);
      expect(detail.message).toContain('unknown operator "like"');
    });

    test('a missing operator', async () => {
      const detail = await bad({ filter: [and({ col_id: Name, value: 'x' } as Rule)] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].operator']);
    });

    test('an unknown col_id', async () => {
      const ghost = '00000000-0000-4000-8000-000000000000';
      const detail = await bad({ filter: [and(rule(ghost, 'eq', 'x'))] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].col_id']);
      expect(detail.message).toContain(`unknown column "${ghost}"`);
    });

    test('a column name instead of a col_id', async () => {
      const detail = await bad({ filter: [and(rule('Name', 'eq', 'x'))] });
      expect(detail.message).toContain('unknown column "Name"');
    });

    test("another project's column id", async () => {
      const other = await csvProject(t, ['Name'], [['x']]);
      const detail = await bad({ filter: [and(rule(other.col.Name as string, 'eq', 'x'))] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].col_id']);
    });

    test('an unknown column deep inside nested groups', async () => {
      const detail = await bad({ filter: [and(rule(Name, 'eq', 'x'), or(and(rule('nope', 'eq', 'x'))))] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[1].rules[0].rules[0].col_id']);
    });

    test('in and not_in with a value that is not an array', async () => {
      for (const op of ['in', 'not_in']) {
        const detail = await bad({ filter: [and(rule(Name, op, 'acme'))] });
        expect(paths(detail)).toEqual(['filter_groups[0].rules[0].value']);
        expect(detail.message).toContain(`array`);
      }
    });

    test('in and not_in with an empty list', async () => {
      for (const op of ['in', 'not_in']) {
        const detail = await bad({ filter: [and(rule(Name, op, []))] });
        expect(paths(detail)).toEqual(['filter_groups[0].rules[0].value']);
        expect(detail.message).toContain('must be a non-empty array');
      }
    });

    test('groups nested more than 8 deep', async () => {
      let g: Group = and(rule(Name, 'is_empty'));
      for (let i = 1; i < 9; i++) g = and(g);
      const detail = await bad({ filter: [g] });
      expect(detail.message).toContain('groups nest at most 8 deep');
    });

    test('in with an item that is an object', async () => {
      const detail = await bad({ filter: [and(rule(Name, 'in', ['a', { b: 1 }]))] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].value']);
    });

    test('contains with an object, an array or no value', async () => {
      for (const value of [{ text: 'acme' }, ['acme'], undefined]) {
        const detail = await bad({ filter: [and(rule(Name, 'contains', value))] });
        expect(paths(detail)).toEqual(['filter_groups[0].rules[0].value']);
        expect(detail.message).toContain('must be a string, number or boolean');
      }
    });

    test('gt with a value that is neither a number nor a string', async () => {
      for (const value of [true, null, [1], { n: 1 }]) {
        const detail = await bad({ filter: [and(rule(Score, 'gt', value))] });
        expect(paths(detail)).toEqual(['filter_groups[0].rules[0].value']);
      }
    });

    test('an unknown key in a rule', async () => {
      const detail = await bad({ filter: [and({ ...rule(Name, 'eq', 'x'), negate: true } as Rule)] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].negate']);
      expect(detail.message).toContain('is not a rule field');
    });

    test('an unknown key in a group', async () => {
      const detail = await bad({ filter: [{ ...and(rule(Name, 'eq', 'x')), not: true }] });
      expect(paths(detail)).toEqual(['filter_groups[0].not']);
      expect(detail.message).toContain('is not a group field');
    });

    test('an unknown field', async () => {
      const detail = await bad({ filter: [and({ ...rule(Name, 'eq', 'x'), field: 'error' })] });
      expect(paths(detail)).toEqual(['filter_groups[0].rules[0].field']);
      expect(detail.message).toContain('must be "value" or "status"');
    });

    test('every problem is listed at once', async () => {
      const detail = await bad({ filter: [and(rule('nope', 'eq', 'x'), rule(Name, 'bogus', 'x'), rule(Name, 'in', 'x'))] });
      expect(paths(detail)).toEqual([
        'filter_groups[0].rules[0].col_id',
        'filter_groups[0].rules[1].operator',
        'filter_groups[0].rules[2].value',
      ]);
    });
  });

  describe('422 for bad sort_rules', () => {
    const bad = async (sort: unknown, raw = false) => {
      const r = await getRows(t, p, raw ? { rawSort: sort as string } : { sort });
      expect(r.status).toBe(422);
      return r.body.detail;
    };
    const paths = (detail: any): string[] => detail.errors.map((e: any) => e.path);

    test('invalid JSON', async () => {
      const detail = await bad(encodeURIComponent('[{"col_id":'), true);
      expect(detail.message).toContain('sort_rules is not valid JSON');
    });

    test('JSON that is not an array', async () => {
      const detail = await bad({ col_id: Name, direction: 'asc' });
      expect(paths(detail)).toEqual(['sort_rules']);
      expect(detail.message).toContain('must be a JSON array');
    });

    test('an item that is not an object', async () => {
      const detail = await bad([Name]);
      expect(paths(detail)).toEqual(['sort_rules[0]']);
    });

    test('an unknown col_id', async () => {
      const detail = await bad([{ col_id: 'Name', direction: 'asc' }]);
      expect(paths(detail)).toEqual(['sort_rules[0].col_id']);
      expect(detail.message).toContain('unknown column "Name"');
    });

    test('a missing col_id', async () => {
      const detail = await bad([{ direction: 'asc' }]);
      expect(paths(detail)).toEqual(['sort_rules[0].col_id']);
    });

    test('a direction other than asc or desc', async () => {
      for (const direction of ['up', 'ASC', 1]) {
        const detail = await bad([{ col_id: Name, direction }]);
        expect(paths(detail)).toEqual(['sort_rules[0].direction']);
        expect(detail.message).toContain('must be "asc" or "desc"');
      }
    });

    test('sort_as_number that is not a boolean', async () => {
      for (const sort_as_number of ['true', 1, null]) {
        const detail = await bad([{ col_id: Score, direction: 'asc', sort_as_number }]);
        expect(paths(detail)).toEqual(['sort_rules[0].sort_as_number']);
        expect(detail.message).toContain('must be a boolean');
      }
    });

    test('more than 8 sort rules', async () => {
      const detail = await bad(Array.from({ length: 9 }, () => ({ col_id: Name, direction: 'asc' })));
      expect(paths(detail)).toEqual(['sort_rules']);
      expect(detail.message).toContain('at most 8 sort rules');
    });

    test('an unknown key', async () => {
      const detail = await bad([{ col_id: Name, direction: 'asc', nulls: 'first' }]);
      expect(paths(detail)).toEqual(['sort_rules[0].nulls']);
    });
  });
});

/**
 * The sort fixture, in insertion order:
 *
 *        Company   Employees   City
 *   s1   beta      "9"         Berlin
 *   s2   Alpha     "10"        null
 *   s3   gamma     null        Austin
 *   s4   alpha     "100"       berlin
 *   s5   null      "2.5"       Austin
 *   s6   Delta     "10"        Berlin
 */
describe.each(DIALECTS)('sorting rows on %s', (dialect) => {
  let t: TestService;
  let p: Fixture;
  let Company: string;
  let Employees: string;
  let City: string;

  const sorted = async (sort: unknown, extra: Omit<ListQuery, 'sort'> = {}): Promise<string[]> =>
    labels(await list(t, p, { sort, ...extra }));

  beforeAll(async () => {
    t = await startTestService(dialect);
    p = await csvProject(
      t,
      ['Label', 'Company', 'Employees', 'City'],
      [
        ['s1', 'beta', '9', 'Berlin'],
        ['s2', 'Alpha', '10', ''],
        ['s3', 'gamma', '', 'Austin'],
        ['s4', 'alpha', '100', 'berlin'],
        ['s5', '', '2.5', 'Austin'],
        ['s6', 'Delta', '10', 'Berlin'],
      ],
    );
    ({ Company, Employees, City } = p.col as { Company: string; Employees: string; City: string });
  });
  afterAll(() => t.stop());

  test('without sort_rules rows come in insertion order', async () => {
    expect(labels(await list(t, p, {}))).toEqual(['s1', 's2', 's3', 's4', 's5', 's6']);
    expect(await sorted([])).toEqual(['s1', 's2', 's3', 's4', 's5', 's6']);
  });

  test('sort_as_number sorts numerically ascending ("9" before "10"), empty cells last', async () => {
    expect(await sorted([{ col_id: Employees, direction: 'asc', sort_as_number: true }])).toEqual(['s5', 's1', 's2', 's6', 's4', 's3']);
  });

  test('sort_as_number descending keeps empty cells last', async () => {
    expect(await sorted([{ col_id: Employees, direction: 'desc', sort_as_number: true }])).toEqual(['s4', 's2', 's6', 's1', 's5', 's3']);
  });

  test('without sort_as_number numbers sort as text ("10" before "9")', async () => {
    expect(await sorted([{ col_id: Employees, direction: 'asc', sort_as_number: false }])).toEqual(['s2', 's6', 's4', 's5', 's1', 's3']);
    expect(await sorted([{ col_id: Employees, direction: 'desc' }])).toEqual(['s1', 's5', 's4', 's2', 's6', 's3']);
  });

  test('text sorts ignore case; ties keep insertion order; empty cells last', async () => {
    expect(await sorted([{ col_id: Company, direction: 'asc' }])).toEqual(['s2', 's4', 's1', 's6', 's3', 's5']);
  });

  test('descending text keeps ties in insertion order and empty cells last', async () => {
    expect(await sorted([{ col_id: Company, direction: 'desc' }])).toEqual(['s3', 's6', 's1', 's2', 's4', 's5']);
  });

  test('direction defaults to asc', async () => {
    expect(await sorted([{ col_id: Company }])).toEqual(['s2', 's4', 's1', 's6', 's3', 's5']);
  });

  test('several sort rules apply in order', async () => {
    const rules = [
      { col_id: City, direction: 'asc' },
      { col_id: Employees, direction: 'desc', sort_as_number: true },
    ];
    // Austin: s5 (2.5), s3 (empty); Berlin/berlin: s4 (100), s6 (10), s1 (9); no city: s2.
    expect(await sorted(rules)).toEqual(['s5', 's3', 's4', 's6', 's1', 's2']);
  });

  test('a later rule only orders ties of the earlier ones', async () => {
    const rules = [
      { col_id: Employees, direction: 'asc', sort_as_number: true },
      { col_id: Company, direction: 'desc' },
    ];
    // s2 (Alpha) and s6 (Delta) tie on 10 employees: Delta first.
    expect(await sorted(rules)).toEqual(['s5', 's1', 's6', 's2', 's4', 's3']);
  });

  test('pages of a sorted listing follow the sort', async () => {
    const rule = [{ col_id: Employees, direction: 'asc', sort_as_number: true }];
    const pages = [];
    for (let page = 1; page <= 3; page++) {
      const body = await list(t, p, { sort: rule, page, page_size: 2 });
      expect(body.total_rows).toBe(6);
      expect(body.total_pages).toBe(3);
      pages.push(labels(body));
    }
    expect(pages).toEqual([
      ['s5', 's1'],
      ['s2', 's6'],
      ['s4', 's3'],
    ]);
  });

  test('a filter then a sort', async () => {
    const body = await list(t, p, {
      filter: [and({ col_id: City, operator: 'eq', value: 'BERLIN' })],
      sort: [{ col_id: Employees, direction: 'asc', sort_as_number: true }],
    });
    expect(labels(body)).toEqual(['s1', 's6', 's4']);
    expect(body.total_rows).toBe(3);
  });

  // Known gap, not fixed: the sort walks the 255-character text key index, so long texts that share
  // their first 255 characters keep insertion order. A plain ORDER BY on the full text costs a
  // filesort of the whole column on MariaDB (≈1 ms → ≈120 ms for 100k rows); see the report.
  test.todo('long texts that share their first 255 characters sort by their whole text', async () => {
    const prefix = 'p'.repeat(255);
    const q = await csvProject(
      t,
      ['Label', 'Bio'],
      [
        ['L1', `${prefix}b tail`],
        ['L2', `${prefix}A tail`],
        ['L3', 'short'],
        ['L4', prefix],
      ],
    );
    const bio = q.col.Bio as string;
    expect(labels(await list(t, q, { sort: [{ col_id: bio, direction: 'asc' }] }))).toEqual(['L4', 'L2', 'L1', 'L3']);
    expect(labels(await list(t, q, { sort: [{ col_id: bio, direction: 'desc' }] }))).toEqual(['L3', 'L1', 'L2', 'L4']);
  });
});

/**
 * Text edge cases, in insertion order:
 *
 *   e1   Acme
 *   e2   "Acme " (a trailing space)
 *   e3   Zürich AG, stored decomposed (u + combining diaeresis)
 *   e4   ΠΡΟΣΦΟΡΑ Α.Ε.
 *   e5   Café Müller, stored composed
 */
describe.each(DIALECTS)('text edge cases on %s', (dialect) => {
  let t: TestService;
  let p: Fixture;
  let Name: string;
  const matching = async (operator: string, value: unknown): Promise<string[]> =>
    labels(await list(t, p, { filter: [and({ col_id: Name, operator, value })] }));

  beforeAll(async () => {
    t = await startTestService(dialect);
    p = await csvProject(
      t,
      ['Label', 'Name'],
      [
        ['e1', 'Acme'],
        ['e2', 'Acme '],
        ['e3', 'Zu\u0308rich AG'],
        ['e4', 'ΠΡΟΣΦΟΡΑ Α.Ε.'],
        ['e5', 'Caf\u00e9 M\u00fcller'],
      ],
    );
    Name = p.col.Name as string;
  });
  afterAll(() => t.stop());

  test('the fixture keeps the trailing space and the decomposed letter', async () => {
    const body = await list(t, p, {});
    expect(body.rows.map((r: any) => r.company.Name.value)).toEqual(['Acme', 'Acme ', 'Zu\u0308rich AG', 'ΠΡΟΣΦΟΡΑ Α.Ε.', 'Café Müller']);
  });

  test('eq and neq count a trailing space', async () => {
    expect(await matching('eq', 'acme')).toEqual(['e1']);
    expect(await matching('eq', 'ACME ')).toEqual(['e2']);
    expect(await matching('neq', 'acme')).toEqual(['e2', 'e3', 'e4', 'e5']);
  });

  test('in and not_in count a trailing space', async () => {
    expect(await matching('in', ['acme', 'nobody'])).toEqual(['e1']);
    expect(await matching('in', ['acme ', 'nobody'])).toEqual(['e2']);
    expect(await matching('in', ['ACME', 'acme '])).toEqual(['e1', 'e2']);
    expect(await matching('not_in', ['acme'])).toEqual(['e2', 'e3', 'e4', 'e5']);
    expect(await matching('not_in', ['acme '])).toEqual(['e1', 'e3', 'e4', 'e5']);
  });

  test('text comparisons put "acme " after "acme"', async () => {
    expect(await matching('gt', 'acme')).toEqual(['e2', 'e3', 'e4', 'e5']);
    expect(await matching('lte', 'acme')).toEqual(['e1']);
    expect(await matching('lt', 'acme ')).toEqual(['e1']);
    expect(await matching('gte', 'acme ')).toEqual(['e2', 'e3', 'e4', 'e5']);
  });

  test('ends_with counts a trailing space', async () => {
    expect(await matching('ends_with', 'acme')).toEqual(['e1']);
    expect(await matching('ends_with', 'acme ')).toEqual(['e2']);
  });

  test('a composed letter in the filter matches the same letter stored decomposed', async () => {
    expect(await matching('eq', 'ZÜRICH AG')).toEqual(['e3']);
    expect(await matching('contains', 'ürich')).toEqual(['e3']);
  });

  test('a decomposed letter in the filter matches the same letter stored composed', async () => {
    expect(await matching('contains', 'cafe\u0301')).toEqual(['e5']);
    expect(await matching('in', ['cafe\u0301 mu\u0308ller'])).toEqual(['e5']);
  });

  test('Greek sigma matches in every form (σ, ς, Σ)', async () => {
    expect(await matching('starts_with', 'ΠΡΟΣ')).toEqual(['e4']);
    expect(await matching('contains', 'προς')).toEqual(['e4']);
    expect(await matching('eq', 'προσφορα α.ε.')).toEqual(['e4']);
  });
});

describe.each(DIALECTS)('wide projects on %s', (dialect) => {
  let t: TestService;
  let p: Fixture;
  const header = Array.from({ length: 70 }, (_, i) => `c${i + 1}`);
  const notEmpty = (cols: string[]) => [and(...cols.map((c) => ({ col_id: p.col[c] as string, operator: 'is_not_empty' })))];

  beforeAll(async () => {
    t = await startTestService(dialect);
    p = await csvProject(t, header, [header.map((h) => `v-${h}`), header.map((h) => `w-${h}`)]);
  });
  afterAll(() => t.stop());

  test('a filter may read 48 different columns, with 8 more to sort on', async () => {
    const body = await list(t, p, {
      filter: notEmpty(header.slice(0, 48)),
      sort: header.slice(48, 56).map((c) => ({ col_id: p.col[c], direction: 'desc' })),
    });
    expect(body.rows.map((r: any) => r.company.c1.value)).toEqual(['w-c1', 'v-c1']);
  });

  test('a filter reading more than 48 different columns is 422, not a server error', async () => {
    const r = await getRows(t, p, { filter: notEmpty(header) });
    expect(r.status).toBe(422);
    expect(r.body.detail.message).toContain('at most 48 different columns');
  });
});
