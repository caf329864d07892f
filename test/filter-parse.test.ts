import { describe, expect, test } from 'bun:test';
import { ServiceError } from '../core/errors.ts';
import type { Column } from '../core/model.ts';
import { mysqlDialect } from '../adapters/storage/mysql/mysql-dialect.ts';
import { keyedFrom } from '../adapters/storage/rows/cell-key-joins.ts';
import { cellKey, TEXT_KEY_CHARS } from '../adapters/storage/rows/cell-records.ts';
import { sqliteDialect } from '../adapters/storage/sqlite/sqlite-dialect.ts';
import { foldCase, isEmptyValue, numericValue } from '../core/rows/cell-values.ts';
import { checkFilterGroups, type FilterNode, MAX_FILTER_COLUMNS, parseFilterGroups, parseSortRules } from '../core/rows/filter-parse.ts';

/** Unit tests of the pure filter/sort parsing and cell-key functions (docs/api.md). */

const column = (no: number, name: string): Column => ({
  no,
  id: `00000000-0000-4000-8000-${String(no).padStart(12, '0')}`,
  name,
  type: 'input',
  toolId: null,
  config: null,
  autoRun: false,
  runCondition: null,
  waterfall: null,
  maxCreditsPerRow: null,
  stepOrder: 'listed',
  position: no,
});
const NAME = column(1, 'Name');
const SCORE = column(2, 'Score');
const COLUMNS = [NAME, SCORE];

const json = (v: unknown): string => JSON.stringify(v);
const groups = (...rules: unknown[]): string => json([{ type: 'and', rules }]);
/** The single rule node of a one-rule filter. */
function onlyRule(raw: string): FilterNode & { kind: 'rule' } {
  const root = parseFilterGroups(raw, COLUMNS);
  if (root?.kind !== 'group' || root.rules[0]?.kind !== 'group') throw new Error(`unexpected tree ${json(root)}`);
  const rule = root.rules[0].rules[0];
  if (rule?.kind !== 'rule') throw new Error(`unexpected tree ${json(root)}`);
  return rule;
}
const argOf = (operator: string, value?: unknown) => onlyRule(groups({ col_id: NAME.id, operator, value })).arg;

/** The 422 a call throws: its detail's message and the listed paths. */
function rejection(call: () => unknown): { message: string; paths: string[]; messages: string[] } {
  try {
    call();
  } catch (e) {
    expect(e).toBeInstanceOf(ServiceError);
    const err = e as ServiceError;
    expect(err.code).toBe('validation_error');
    expect(err.status).toBe(422);
    const detail = err.detail as { message: string; errors: { path: string; message: string }[] };
    return { message: detail.message, paths: detail.errors.map((x) => x.path), messages: detail.errors.map((x) => x.message) };
  }
  throw new Error('expected a validation error, but the call returned');
}

describe('parseFilterGroups', () => {
  test('no parameter, an empty one or an empty array means no filter', () => {
    expect(parseFilterGroups(undefined, COLUMNS)).toBeNull();
    expect(parseFilterGroups('', COLUMNS)).toBeNull();
    expect(parseFilterGroups('  ', COLUMNS)).toBeNull();
    expect(parseFilterGroups('[]', COLUMNS)).toBeNull();
  });

  test('top-level groups are wrapped in one "and" group; columns resolve to their numbers', () => {
    const raw = json([
      { type: 'and', rules: [{ col_id: NAME.id, operator: 'eq', value: 'Acme' }] },
      { type: 'or', rules: [{ col_id: SCORE.id, operator: 'is_empty' }] },
    ]);
    expect(parseFilterGroups(raw, COLUMNS)).toEqual({
      kind: 'group',
      type: 'and',
      rules: [
        { kind: 'group', type: 'and', rules: [{ kind: 'rule', colNo: 1, field: 'value', op: 'eq', arg: { kind: 'text', text: 'acme' } }] },
        { kind: 'group', type: 'or', rules: [{ kind: 'rule', colNo: 2, field: 'value', op: 'is_empty', arg: { kind: 'none' } }] },
      ],
    });
  });

  test('nested groups keep their shape and type', () => {
    const raw = groups({
      type: 'or',
      rules: [
        { col_id: NAME.id, operator: 'contains', value: 'a' },
        { type: 'and', rules: [] },
      ],
    });
    const root = parseFilterGroups(raw, COLUMNS);
    expect(root).toEqual({
      kind: 'group',
      type: 'and',
      rules: [
        {
          kind: 'group',
          type: 'and',
          rules: [
            {
              kind: 'group',
              type: 'or',
              rules: [
                { kind: 'rule', colNo: 1, field: 'value', op: 'contains', arg: { kind: 'text', text: 'a' } },
                { kind: 'group', type: 'and', rules: [] },
              ],
            },
          ],
        },
      ],
    });
  });

  test('field defaults to "value" and may be "status"', () => {
    expect(onlyRule(groups({ col_id: NAME.id, operator: 'eq', value: 'x' })).field).toBe('value');
    expect(onlyRule(groups({ col_id: NAME.id, operator: 'eq', value: 'Completed', field: 'status' }))).toEqual({
      kind: 'rule',
      colNo: 1,
      field: 'status',
      op: 'eq',
      arg: { kind: 'text', text: 'completed' },
    });
  });

  test('text values are folded to lower case', () => {
    for (const op of ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with']) {
      expect(argOf(op, 'ÉCOLE Zürich')).toEqual({ kind: 'text', text: 'école zürich' });
    }
  });

  test('contains with a number or a boolean looks for its text', () => {
    expect(argOf('contains', 12)).toEqual({ kind: 'text', text: '12' });
    expect(argOf('starts_with', true)).toEqual({ kind: 'text', text: 'true' });
  });

  test('eq and neq with a number compare numbers; with a numeric string, text', () => {
    expect(argOf('eq', 10)).toEqual({ kind: 'number', num: 10 });
    expect(argOf('neq', 3.5)).toEqual({ kind: 'number', num: 3.5 });
    expect(argOf('eq', '10')).toEqual({ kind: 'text', text: '10' });
  });

  test('gt/gte/lt/lte compare numbers for a number or a numeric string, else text', () => {
    expect(argOf('gt', 9)).toEqual({ kind: 'number', num: 9 });
    expect(argOf('gte', ' 9.5 ')).toEqual({ kind: 'number', num: 9.5 });
    expect(argOf('lt', '-1e3')).toEqual({ kind: 'number', num: -1000 });
    expect(argOf('lte', 'Beta')).toEqual({ kind: 'text', text: 'beta' });
    expect(argOf('gt', '12abc')).toEqual({ kind: 'text', text: '12abc' });
  });

  test('in and not_in take an array, folded to lower-case texts', () => {
    expect(argOf('in', ['ACME', 12, false])).toEqual({ kind: 'list', texts: ['acme', '12', 'false'] });
    expect(argOf('not_in', ['Zürich'])).toEqual({ kind: 'list', texts: ['zürich'] });
  });

  test('is_empty and is_not_empty ignore the value', () => {
    expect(argOf('is_empty')).toEqual({ kind: 'none' });
    expect(argOf('is_empty', null)).toEqual({ kind: 'none' });
    expect(argOf('is_not_empty', 'anything')).toEqual({ kind: 'none' });
  });

  test('checkFilterGroups takes already-parsed JSON and names its own parameter', () => {
    expect(checkFilterGroups([{ type: 'and', rules: [{ col_id: NAME.id, operator: 'is_empty' }] }], COLUMNS)).not.toBeNull();
    const { paths, message } = rejection(() => checkFilterGroups({}, COLUMNS, 'filter_groups_json'));
    expect(paths).toEqual(['filter_groups_json']);
    expect(message).toStartWith('filter_groups_json is invalid');
  });

  describe('rejections (422 naming the problem)', () => {
    test('invalid JSON', () => {
      const r = rejection(() => parseFilterGroups('[{', COLUMNS));
      expect(r.message).toContain('filter_groups is not valid JSON');
      expect(r.paths).toEqual(['filter_groups']);
    });

    test('not an array', () => {
      for (const raw of ['{}', 'null', '"and"', '1']) {
        const r = rejection(() => parseFilterGroups(raw, COLUMNS));
        expect(r.paths).toEqual(['filter_groups']);
        expect(r.messages).toEqual(['must be a JSON array of groups']);
      }
    });

    test('a top-level item that is a rule or has no rules', () => {
      expect(rejection(() => parseFilterGroups(json([{ col_id: NAME.id, operator: 'is_empty' }]), COLUMNS)).paths).toEqual([
        'filter_groups[0]',
      ]);
      expect(rejection(() => parseFilterGroups(json([{ type: 'and' }]), COLUMNS)).paths).toEqual(['filter_groups[0]']);
    });

    test('a nested group without rules', () => {
      const r = rejection(() => parseFilterGroups(groups({ type: 'or' }), COLUMNS));
      expect(r.paths).toEqual(['filter_groups[0].rules[0].rules']);
      expect(r.messages).toEqual(['must be an array']);
    });

    test('a rule that is not an object', () => {
      const r = rejection(() => parseFilterGroups(groups('eq'), COLUMNS));
      expect(r.paths).toEqual(['filter_groups[0].rules[0]']);
    });

    test('an unknown or missing group type', () => {
      expect(rejection(() => parseFilterGroups(json([{ type: 'xor', rules: [] }]), COLUMNS)).paths).toEqual(['filter_groups[0].type']);
      expect(rejection(() => parseFilterGroups(json([{ rules: [] }]), COLUMNS)).paths).toEqual(['filter_groups[0].type']);
    });

    test('an unknown operator names the known ones', () => {
      const r = rejection(() => parseFilterGroups(groups({ col_id: NAME.id, operator: 'LIKE', value: 'a' }), COLUMNS));
      expect(r.paths).toEqual(['filter_groups[0].rules[0].operator']);
      expect(r.messages[0]).toContain('unknown operator "LIKE"');
      expect(r.messages[0]).toContain('not_in');
    });

    test('an unknown, missing or non-string col_id', () => {
      expect(rejection(() => parseFilterGroups(groups({ col_id: 'Name', operator: 'is_empty' }), COLUMNS)).messages).toEqual([
        'unknown column "Name"',
      ]);
      expect(rejection(() => parseFilterGroups(groups({ operator: 'is_empty' }), COLUMNS)).messages).toEqual([
        'must be a column id string',
      ]);
      expect(rejection(() => parseFilterGroups(groups({ col_id: 1, operator: 'is_empty' }), COLUMNS)).messages).toEqual([
        'must be a column id string',
      ]);
    });

    test('an unknown field', () => {
      const r = rejection(() => parseFilterGroups(groups({ col_id: NAME.id, operator: 'is_empty', field: 'error' }), COLUMNS));
      expect(r.paths).toEqual(['filter_groups[0].rules[0].field']);
    });

    test('unknown keys in rules and groups', () => {
      const r = rejection(() =>
        parseFilterGroups(json([{ type: 'and', rules: [{ col_id: NAME.id, operator: 'is_empty', negate: true }], label: 'x' }]), COLUMNS),
      );
      expect(r.paths).toEqual(['filter_groups[0].label', 'filter_groups[0].rules[0].negate']);
    });

    test('in and not_in with a value that is not a non-empty array of scalars', () => {
      for (const value of ['acme', { a: 1 }, null, undefined, [], [['a']], [null], [{ a: 1 }]]) {
        for (const operator of ['in', 'not_in']) {
          const r = rejection(() => parseFilterGroups(groups({ col_id: NAME.id, operator, value }), COLUMNS));
          expect(r.paths).toEqual(['filter_groups[0].rules[0].value']);
        }
      }
    });

    test('text operators with an object, an array, null or no value', () => {
      for (const operator of ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with']) {
        for (const value of [{ a: 1 }, ['a'], null, undefined]) {
          const r = rejection(() => parseFilterGroups(groups({ col_id: NAME.id, operator, value }), COLUMNS));
          expect(r.paths).toEqual(['filter_groups[0].rules[0].value']);
          expect(r.messages[0]).toBe(`must be a string, number or boolean for ${operator}`);
        }
      }
    });

    test('comparisons with a value that is neither a number nor a string', () => {
      for (const operator of ['gt', 'gte', 'lt', 'lte']) {
        for (const value of [true, null, undefined, [1], { n: 1 }]) {
          const r = rejection(() => parseFilterGroups(groups({ col_id: SCORE.id, operator, value }), COLUMNS));
          expect(r.messages).toEqual([`must be a number or a string for ${operator}`]);
        }
      }
    });

    test('every problem is listed, in order', () => {
      const r = rejection(() =>
        parseFilterGroups(
          groups(
            { col_id: 'nope', operator: 'eq', value: 'x' },
            { col_id: NAME.id, operator: 'bogus' },
            { col_id: NAME.id, operator: 'in', value: 'x' },
          ),
          COLUMNS,
        ),
      );
      expect(r.paths).toEqual([
        'filter_groups[0].rules[0].col_id',
        'filter_groups[0].rules[1].operator',
        'filter_groups[0].rules[2].value',
      ]);
      expect(r.message).toContain('filter_groups[0].rules[0].col_id unknown column "nope"');
    });

    test('groups nest at most 8 deep', () => {
      const nest = (depth: number): unknown => {
        let node: unknown = { col_id: NAME.id, operator: 'is_empty' };
        for (let i = 0; i < depth; i++) node = { type: 'and', rules: [node] };
        return [node];
      };
      expect(parseFilterGroups(json(nest(8)), COLUMNS)).not.toBeNull();
      expect(rejection(() => parseFilterGroups(json(nest(9)), COLUMNS)).messages).toEqual(['groups nest at most 8 deep']);
    });

    test('at most 100 rules', () => {
      const rules = (n: number) => Array.from({ length: n }, () => ({ col_id: NAME.id, operator: 'is_empty' }));
      expect(parseFilterGroups(groups(...rules(100)), COLUMNS)).not.toBeNull();
      expect(rejection(() => parseFilterGroups(groups(...rules(101)), COLUMNS)).messages).toEqual(['at most 100 rules']);
    });

    test(`at most ${MAX_FILTER_COLUMNS} different columns`, () => {
      const wide = Array.from({ length: MAX_FILTER_COLUMNS + 1 }, (_, i) => column(i + 1, `c${i + 1}`));
      const rules = (n: number) => wide.slice(0, n).map((c) => ({ col_id: c.id, operator: 'is_empty' }));
      expect(parseFilterGroups(groups(...rules(MAX_FILTER_COLUMNS), ...rules(MAX_FILTER_COLUMNS)), wide)).not.toBeNull();
      const r = rejection(() => parseFilterGroups(groups(...rules(MAX_FILTER_COLUMNS + 1)), wide));
      expect(r.paths).toEqual(['filter_groups']);
      expect(r.messages[0]).toContain(`at most ${MAX_FILTER_COLUMNS} different columns`);
    });
  });
});

describe('parseSortRules', () => {
  test('no parameter, an empty one or an empty array means no sort', () => {
    expect(parseSortRules(undefined, COLUMNS)).toEqual([]);
    expect(parseSortRules('', COLUMNS)).toEqual([]);
    expect(parseSortRules('[]', COLUMNS)).toEqual([]);
  });

  test('rules keep their order; direction defaults to asc and sort_as_number to false', () => {
    const raw = json([
      { col_id: SCORE.id, direction: 'desc', sort_as_number: true },
      { col_id: NAME.id },
      { col_id: NAME.id, direction: 'asc', sort_as_number: false },
    ]);
    expect(parseSortRules(raw, COLUMNS)).toEqual([
      { colNo: 2, desc: true, numeric: true },
      { colNo: 1, desc: false, numeric: false },
      { colNo: 1, desc: false, numeric: false },
    ]);
  });

  test('invalid JSON', () => {
    expect(rejection(() => parseSortRules('[{"col_id":', COLUMNS)).message).toContain('sort_rules is not valid JSON');
  });

  test('not an array', () => {
    const r = rejection(() => parseSortRules(json({ col_id: NAME.id }), COLUMNS));
    expect(r.paths).toEqual(['sort_rules']);
    expect(r.messages).toEqual(['must be a JSON array of sort rules']);
  });

  test('an item that is not an object', () => {
    expect(rejection(() => parseSortRules(json([NAME.id]), COLUMNS)).paths).toEqual(['sort_rules[0]']);
  });

  test('an unknown or missing col_id', () => {
    expect(rejection(() => parseSortRules(json([{ col_id: 'Name' }]), COLUMNS)).messages).toEqual(['unknown column "Name"']);
    expect(rejection(() => parseSortRules(json([{ direction: 'asc' }]), COLUMNS)).paths).toEqual(['sort_rules[0].col_id']);
  });

  test('a direction other than "asc" or "desc"', () => {
    for (const direction of ['up', 'DESC', 1]) {
      const r = rejection(() => parseSortRules(json([{ col_id: NAME.id, direction }]), COLUMNS));
      expect(r.paths).toEqual(['sort_rules[0].direction']);
    }
  });

  test('sort_as_number that is not a boolean', () => {
    for (const sort_as_number of ['true', 1, null]) {
      const r = rejection(() => parseSortRules(json([{ col_id: SCORE.id, sort_as_number }]), COLUMNS));
      expect(r.paths).toEqual(['sort_rules[0].sort_as_number']);
      expect(r.messages).toEqual(['must be a boolean']);
    }
  });

  test('an unknown key', () => {
    expect(rejection(() => parseSortRules(json([{ col_id: NAME.id, nulls: 'first' }]), COLUMNS)).paths).toEqual(['sort_rules[0].nulls']);
  });

  test('at most 8 sort rules', () => {
    const rules = (n: number) => Array.from({ length: n }, () => ({ col_id: NAME.id }));
    expect(parseSortRules(json(rules(8)), COLUMNS)).toHaveLength(8);
    expect(rejection(() => parseSortRules(json(rules(9)), COLUMNS)).messages).toEqual(['at most 8 sort rules']);
  });

  test('every problem is listed, in order', () => {
    const r = rejection(() => parseSortRules(json([{ col_id: 'x' }, { col_id: NAME.id, direction: 'up', sort_as_number: 'no' }]), COLUMNS));
    expect(r.paths).toEqual(['sort_rules[0].col_id', 'sort_rules[1].direction', 'sort_rules[1].sort_as_number']);
  });
});

describe('isEmptyValue', () => {
  test('null, undefined, "" and [] are empty', () => {
    for (const v of [null, undefined, '', []]) expect(isEmptyValue(v)).toBe(true);
  });

  test('whitespace-only text is empty', () => {
    expect(isEmptyValue('   ')).toBe(true);
    expect(isEmptyValue('\t\n')).toBe(true);
  });

  test('zero, false, text, objects and non-empty arrays are not empty', () => {
    for (const v of [0, false, 'a', ' a ', ['a'], {}]) expect(isEmptyValue(v)).toBe(false);
  });
});

describe('numericValue', () => {
  test('finite numbers are themselves', () => {
    expect(numericValue(12)).toBe(12);
    expect(numericValue(-0.5)).toBe(-0.5);
  });

  test('NaN and infinities are not numeric', () => {
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(numericValue(v)).toBeNull();
  });

  test('strings that are exactly one number are numeric', () => {
    const cases: [string, number][] = [
      ['12', 12],
      ['3.5', 3.5],
      [' 3.5 ', 3.5],
      ['-2', -2],
      ['+4', 4],
      ['.5', 0.5],
      ['5.', 5],
      ['-1e3', -1000],
      ['2E-2', 0.02],
      ['007', 7],
    ];
    for (const [text, n] of cases) expect(numericValue(text)).toBe(n);
  });

  test('other strings are not numeric', () => {
    for (const text of ['', ' ', 'abc', '12abc', 'n/a', '1,000', '1 000', '0x10', 'Infinity', 'NaN', '1e400', '--1', '.', 'e5']) {
      expect(numericValue(text)).toBeNull();
    }
  });

  test('booleans, null, arrays and objects are not numeric', () => {
    for (const v of [true, false, null, undefined, [12], ['12'], { n: 12 }]) expect(numericValue(v)).toBeNull();
  });
});

describe('foldCase', () => {
  test('lower-cases, including accented letters', () => {
    expect(foldCase('ÉCOLE Zürich')).toBe('école zürich');
  });

  test('composes decomposed letters (NFC)', () => {
    expect(foldCase('Zu\u0308rich')).toBe('zürich');
    expect(foldCase('Zu\u0308rich')).toBe(foldCase('ZÜRICH'));
  });

  test('folds the Greek final sigma', () => {
    expect(foldCase('ΠΡΟΣ')).toBe(foldCase('προσ'));
    expect(foldCase('οδός')).toBe('οδόσ');
  });

  test('leaves emoji alone', () => {
    expect(foldCase('Rocket 🚀')).toBe('rocket 🚀');
  });
});

describe('cellKey', () => {
  test('text: lower-cased key, not numeric, not empty', () => {
    expect(cellKey('Acme Corp', 'default')).toEqual({
      status: 'default',
      is_empty: 0,
      num_missing: 1,
      num_key: null,
      text_key: 'acme corp',
      text_full: null,
    });
  });

  test('a numeric string has a number key beside its text key', () => {
    expect(cellKey('3.5', 'default')).toMatchObject({ is_empty: 0, num_missing: 0, num_key: 3.5, text_key: '3.5' });
    expect(cellKey(' 10 ', 'default')).toMatchObject({ num_missing: 0, num_key: 10, text_key: ' 10 ' });
  });

  test('a JSON number has a number key and its text', () => {
    expect(cellKey(7, 'completed')).toEqual({
      status: 'completed',
      is_empty: 0,
      num_missing: 0,
      num_key: 7,
      text_key: '7',
      text_full: null,
    });
  });

  test('null, "" and [] are empty with no number', () => {
    for (const v of [null, '', []]) {
      expect(cellKey(v, 'pending')).toEqual({
        status: 'pending',
        is_empty: 1,
        num_missing: 1,
        num_key: null,
        text_key: '',
        text_full: null,
      });
    }
  });

  test('booleans, arrays and objects are keyed by the text a user sees', () => {
    expect(cellKey(true, 'default')).toMatchObject({ num_missing: 1, text_key: 'true' });
    expect(cellKey(['Berlin', 'PARIS'], 'default')).toMatchObject({ is_empty: 0, text_key: 'berlin, paris' });
    expect(cellKey({ A: 1 }, 'default')).toMatchObject({ is_empty: 0, text_key: '{"a":1}' });
  });

  test(`text of exactly ${TEXT_KEY_CHARS} characters fits the key`, () => {
    const text = 'A'.repeat(TEXT_KEY_CHARS);
    expect(cellKey(text, 'default')).toMatchObject({ text_key: text.toLowerCase(), text_full: null });
  });

  test('longer text keeps a prefix as key and the whole folded text beside it', () => {
    const text = `${'A'.repeat(TEXT_KEY_CHARS)} Tail`;
    const key = cellKey(text, 'default');
    expect(key.text_key).toBe('a'.repeat(TEXT_KEY_CHARS));
    expect(key.text_full).toBe(text.toLowerCase());
  });

  test('the key never splits an emoji in half', () => {
    const text = `${'a'.repeat(TEXT_KEY_CHARS - 1)}🚀 and more`;
    const key = cellKey(text, 'default');
    expect(key.text_key).toBe('a'.repeat(TEXT_KEY_CHARS - 1));
    expect(key.text_full).toBe(text);
  });

  test('keys fold like filter values, so both sides compare equal', () => {
    expect(cellKey('ΠΡΟΣΦΟΡΑ', 'default').text_key).toBe(foldCase('προσφορα'));
    expect(cellKey('Cafe\u0301', 'default').text_key).toBe('café');
  });
});

describe('storage join limit', () => {
  for (const dialect of [mysqlDialect, sqliteDialect]) {
    test(`a listing reading more columns than ${dialect.name} joins is a 422, not a database error`, () => {
      const cols = Array.from({ length: dialect.limits.maxJoinedTables + 1 }, (_, i) => i + 1);
      expect(() => keyedFrom(dialect, 1, cols.slice(0, -1), null)).not.toThrow();
      const r = rejection(() => keyedFrom(dialect, 1, cols, null));
      expect(r.message).toContain(`at most ${dialect.limits.maxJoinedTables}`);
      expect(r.paths).toEqual(['filter_groups']);
    });
  }

  test('the API limits stay under every database join limit', () => {
    const sortRules = 8;
    expect(MAX_FILTER_COLUMNS + sortRules).toBeLessThanOrEqual(
      Math.min(mysqlDialect.limits.maxJoinedTables, sqliteDialect.limits.maxJoinedTables),
    );
  });
});
