import { type FieldError, ServiceError } from '../errors.ts';
import type { Column } from '../model.ts';
import { foldCase, numericValue } from './cell-values.ts';
import { OPERATORS, type Operator } from './filter-schema.ts';

/** A checked filter: columns resolved, values normalised to what storage compares. */
export type FilterNode =
  | { kind: 'group'; type: 'and' | 'or'; rules: FilterNode[] }
  | { kind: 'rule'; colNo: number; field: 'value' | 'status'; op: Operator; arg: RuleArg };

/** What a rule compares against: lower-cased text, a number, or a list of lower-cased texts. */
export type RuleArg =
  | { kind: 'none' }
  | { kind: 'text'; text: string }
  | { kind: 'number'; num: number }
  | { kind: 'list'; texts: string[] };

export interface SortSpec {
  colNo: number;
  desc: boolean;
  numeric: boolean;
}

const GROUP_KEYS = new Set(['type', 'rules']);
const RULE_KEYS = new Set(['col_id', 'operator', 'value', 'field']);
const MAX_DEPTH = 8;
const MAX_RULES = 100;
/**
 * Bounds on the work of one listing: every column a filter or sort reads costs storage a lookup per
 * row, so a filter reads at most 48 different columns and a sort at most 8 rules. (Storage has its
 * own hard limit on the columns one listing may read, a 422 too; these stay under it.)
 */
export const MAX_FILTER_COLUMNS = 48;
const MAX_SORT_RULES = 8;

function bad(param: string, errors: FieldError[]): ServiceError {
  return new ServiceError('validation_error', {
    message: `${param} is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
    errors,
  });
}

function parseJson(param: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new ServiceError('validation_error', {
      message: `${param} is not valid JSON (${(e as Error).message}); send a URL-encoded JSON array`,
      errors: [{ path: param, message: 'is not valid JSON' }],
    });
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const scalarText = (v: unknown): string | null =>
  typeof v === 'string' ? foldCase(v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;

function ruleArg(op: Operator, value: unknown, path: string, errors: FieldError[]): RuleArg {
  switch (op) {
    case 'is_empty':
    case 'is_not_empty':
      return { kind: 'none' };
    case 'in':
    case 'not_in': {
      if (!Array.isArray(value) || value.length === 0 || value.length > 1000) {
        errors.push({ path: `${path}.value`, message: `must be a non-empty array (at most 1000 items) for ${op}` });
        return { kind: 'none' };
      }
      const texts = value.map(scalarText);
      if (texts.some((t) => t === null)) {
        errors.push({ path: `${path}.value`, message: `items must be strings, numbers or booleans for ${op}` });
        return { kind: 'none' };
      }
      return { kind: 'list', texts: texts as string[] };
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const num = numericValue(value);
      if (num !== null) return { kind: 'number', num };
      if (typeof value === 'string') return { kind: 'text', text: foldCase(value) };
      errors.push({ path: `${path}.value`, message: `must be a number or a string for ${op}` });
      return { kind: 'none' };
    }
    case 'eq':
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: any other eq/neq value compares as text, as the default does
    case 'neq':
      if (typeof value === 'number' && Number.isFinite(value)) return { kind: 'number', num: value };
    default: {
      const text = scalarText(value);
      if (text === null) {
        errors.push({ path: `${path}.value`, message: `must be a string, number or boolean for ${op}` });
        return { kind: 'none' };
      }
      return { kind: 'text', text };
    }
  }
}

/**
 * Parses and checks `filter_groups` (URL-encoded JSON) against the project's columns.
 * Every problem is a 422 naming the path, so a client can fix its request.
 */
export function parseFilterGroups(raw: string | undefined, columns: Column[], param = 'filter_groups'): FilterNode | null {
  if (raw === undefined || raw.trim() === '') return null;
  return checkFilterGroups(parseJson(param, raw), columns, param);
}

export function checkFilterGroups(input: unknown, columns: Column[], param = 'filter_groups'): FilterNode | null {
  if (!Array.isArray(input)) throw bad(param, [{ path: param, message: 'must be a JSON array of groups' }]);
  const byId = new Map(columns.map((c) => [c.id, c]));
  const errors: FieldError[] = [];
  let ruleCount = 0;
  const colNos = new Set<number>();

  const node = (v: unknown, path: string, depth: number): FilterNode | null => {
    if (!isPlainObject(v)) {
      errors.push({ path, message: 'must be an object (a rule or a {type, rules} group)' });
      return null;
    }
    if ('rules' in v || 'type' in v) {
      if (depth > MAX_DEPTH) {
        errors.push({ path, message: `groups nest at most ${MAX_DEPTH} deep` });
        return null;
      }
      for (const k of Object.keys(v))
        if (!GROUP_KEYS.has(k)) errors.push({ path: `${path}.${k}`, message: 'is not a group field (type, rules)' });
      if (v.type !== 'and' && v.type !== 'or') errors.push({ path: `${path}.type`, message: 'must be "and" or "or"' });
      if (!Array.isArray(v.rules)) {
        errors.push({ path: `${path}.rules`, message: 'must be an array' });
        return null;
      }
      const rules = v.rules.map((r, i) => node(r, `${path}.rules[${i}]`, depth + 1)).filter((r): r is FilterNode => r !== null);
      return { kind: 'group', type: v.type === 'or' ? 'or' : 'and', rules };
    }
    ruleCount++;
    for (const k of Object.keys(v))
      if (!RULE_KEYS.has(k)) errors.push({ path: `${path}.${k}`, message: 'is not a rule field (col_id, operator, value, field)' });
    const col = typeof v.col_id === 'string' ? byId.get(v.col_id) : undefined;
    if (!col)
      errors.push({
        path: `${path}.col_id`,
        message: typeof v.col_id === 'string' ? `unknown column "${v.col_id}"` : 'must be a column id string',
      });
    const op = v.operator as Operator;
    if (!OPERATORS.includes(op))
      errors.push({
        path: `${path}.operator`,
        message: `unknown operator ${JSON.stringify(v.operator)}; use one of ${OPERATORS.join(', ')}`,
      });
    const field = v.field ?? 'value';
    if (field !== 'value' && field !== 'status') errors.push({ path: `${path}.field`, message: 'must be "value" or "status"' });
    if (!col || !OPERATORS.includes(op) || (field !== 'value' && field !== 'status')) return null;
    const arg = ruleArg(op, v.value, path, errors);
    colNos.add(col.no);
    return { kind: 'rule', colNo: col.no, field, op, arg };
  };

  const groups = input
    .map((g, i) => {
      const path = `${param}[${i}]`;
      if (isPlainObject(g) && !('rules' in g)) {
        errors.push({ path, message: 'must be a group {"type": "and" | "or", "rules": [...]}' });
        return null;
      }
      return node(g, path, 1);
    })
    .filter((g): g is FilterNode => g !== null);
  if (ruleCount > MAX_RULES) errors.push({ path: param, message: `at most ${MAX_RULES} rules` });
  if (colNos.size > MAX_FILTER_COLUMNS)
    errors.push({
      path: param,
      message: `reads ${colNos.size} columns; a filter may read at most ${MAX_FILTER_COLUMNS} different columns`,
    });
  if (errors.length) throw bad(param, errors);
  if (groups.length === 0) return null;
  return { kind: 'group', type: 'and', rules: groups };
}

/** Parses and checks `sort_rules`; an unknown column is a 422. */
export function parseSortRules(raw: string | undefined, columns: Column[], param = 'sort_rules'): SortSpec[] {
  if (raw === undefined || raw.trim() === '') return [];
  const input = parseJson(param, raw);
  if (!Array.isArray(input)) throw bad(param, [{ path: param, message: 'must be a JSON array of sort rules' }]);
  const byId = new Map(columns.map((c) => [c.id, c]));
  const errors: FieldError[] = [];
  const specs: SortSpec[] = [];
  input.forEach((r, i) => {
    const path = `${param}[${i}]`;
    if (!isPlainObject(r)) {
      errors.push({ path, message: 'must be an object {col_id, direction, sort_as_number}' });
      return;
    }
    for (const k of Object.keys(r))
      if (!['col_id', 'direction', 'sort_as_number'].includes(k)) errors.push({ path: `${path}.${k}`, message: 'is not a sort field' });
    const col = typeof r.col_id === 'string' ? byId.get(r.col_id) : undefined;
    if (!col)
      errors.push({
        path: `${path}.col_id`,
        message: typeof r.col_id === 'string' ? `unknown column "${r.col_id}"` : 'must be a column id string',
      });
    const direction = r.direction ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') errors.push({ path: `${path}.direction`, message: 'must be "asc" or "desc"' });
    if (r.sort_as_number !== undefined && typeof r.sort_as_number !== 'boolean')
      errors.push({ path: `${path}.sort_as_number`, message: 'must be a boolean' });
    if (col) specs.push({ colNo: col.no, desc: direction === 'desc', numeric: r.sort_as_number === true });
  });
  if (input.length > MAX_SORT_RULES) errors.push({ path: param, message: `at most ${MAX_SORT_RULES} sort rules` });
  if (errors.length) throw bad(param, errors);
  return specs;
}
