import { type RawBuilder, sql } from 'kysely';
import type { FilterNode, RuleArg, SortSpec } from '../../../core/rows/filter-parse.ts';
import { TEXT_KEY_CHARS } from './cell-records.ts';
import type { SeekKey } from './listing-memory.ts';

/** Escapes LIKE wildcards with `!` (a portable escape character for MySQL and SQLite). */
export function likeEscape(text: string): string {
  return text.replace(/[!%_]/g, (c) => `!${c}`);
}

type Alias = (colNo: number) => string;

const TRUE = sql<boolean>`1 = 1`;
const FALSE = sql<boolean>`1 = 0`;

function col(alias: string, name: string): RawBuilder<unknown> {
  return sql.ref(`${alias}.${name}`);
}

/** The whole lower-cased text of a cell: the indexed key, or the full text when it was longer. */
function fullText(a: string): RawBuilder<unknown> {
  return sql`COALESCE(${col(a, 'text_full')}, ${col(a, 'text_key')})`;
}

function like(expr: RawBuilder<unknown>, pattern: string): RawBuilder<boolean> {
  return sql<boolean>`${expr} LIKE ${pattern} ESCAPE '!'`;
}

/**
 * Trailing spaces count, in both dialects. MySQL/MariaDB `_bin` collations are PAD SPACE: there
 * 'acme' = 'acme ' and 'acme ' > 'acme' is false, while SQLite (and LIKE everywhere) compare every
 * character. Where `=` holds, comparing lengths too settles it: LENGTH counts bytes in MySQL and
 * characters in SQLite, the same unit on both sides of one comparison.
 */
function sameLength(expr: RawBuilder<unknown>, text: string, op: '=' | '>' | '>=' | '<' | '<=' = '='): RawBuilder<boolean> {
  return sql<boolean>`LENGTH(${expr}) ${sql.raw(op)} LENGTH(${text})`;
}

/** Exact text equality (see sameLength). */
function sameText(expr: RawBuilder<unknown>, text: string): RawBuilder<boolean> {
  return sql<boolean>`(${expr} = ${text} AND ${sameLength(expr, text)})`;
}

/** Text equality that can use the (project, column, is_empty, text_key) index for short needles. */
function textEquals(a: string, text: string): RawBuilder<boolean> {
  if (text.length <= TEXT_KEY_CHARS) return sql<boolean>`(${sameText(col(a, 'text_key'), text)} AND ${col(a, 'text_full')} IS NULL)`;
  return sameText(col(a, 'text_full'), text);
}

function list(texts: string[]): RawBuilder<unknown> {
  return sql`(${sql.join(texts)})`;
}

/**
 * `expr` is exactly one of `texts`. Needles without a trailing space go in one IN list (exact once
 * the text itself does not end in a space, see sameLength); the rare ones with one are checked apart.
 */
function inList(expr: RawBuilder<unknown>, texts: string[]): RawBuilder<boolean> {
  const plain = texts.filter((t) => !t.endsWith(' '));
  const spaced = texts.filter((t) => t.endsWith(' '));
  const parts: RawBuilder<boolean>[] = [];
  if (plain.length) parts.push(sql<boolean>`(${expr} IN ${list(plain)} AND ${expr} NOT LIKE '% ')`);
  for (const t of spaced) parts.push(sameText(expr, t));
  if (parts.length === 0) return FALSE;
  return sql<boolean>`(${sql.join(parts, sql.raw(' OR '))})`;
}

/** Text order with trailing spaces counted (see sameLength): "acme" < "acme ". */
function textCompare(expr: RawBuilder<unknown>, op: 'gt' | 'gte' | 'lt' | 'lte', text: string): RawBuilder<boolean> {
  const strict = sql.raw(op.startsWith('g') ? '>' : '<');
  const len = ({ gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[op];
  return sql<boolean>`(${expr} ${strict} ${text} OR (${expr} = ${text} AND ${sameLength(expr, text, len)}))`;
}

function statusRule(a: string, op: FilterNode & { kind: 'rule' }): RawBuilder<boolean> {
  const s = col(a, 'status');
  const arg = op.arg;
  const text = arg.kind === 'text' ? arg.text : arg.kind === 'number' ? String(arg.num) : '';
  const texts = arg.kind === 'list' ? arg.texts : [];
  switch (op.op) {
    case 'eq':
      return sameText(s, text);
    case 'neq':
      return sql<boolean>`NOT ${sameText(s, text)}`;
    case 'in':
      return inList(s, texts);
    case 'not_in':
      return sql<boolean>`NOT ${inList(s, texts)}`;
    case 'contains':
      return like(s, `%${likeEscape(text)}%`);
    case 'not_contains':
      return sql<boolean>`NOT ${like(s, `%${likeEscape(text)}%`)}`;
    case 'starts_with':
      return like(s, `${likeEscape(text)}%`);
    case 'ends_with':
      return like(s, `%${likeEscape(text)}`);
    case 'is_empty':
      return FALSE;
    case 'is_not_empty':
      return TRUE;
    case 'gt':
      return sql<boolean>`${s} > ${text}`;
    case 'gte':
      return sql<boolean>`${s} >= ${text}`;
    case 'lt':
      return sql<boolean>`${s} < ${text}`;
    case 'lte':
      return sql<boolean>`${s} <= ${text}`;
  }
}

function compare(a: string, op: 'gt' | 'gte' | 'lt' | 'lte', arg: RuleArg): RawBuilder<boolean> {
  const sym = sql.raw({ gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]);
  if (arg.kind === 'number') return sql<boolean>`${col(a, 'num_key')} ${sym} ${arg.num}`;
  const text = arg.kind === 'text' ? arg.text : '';
  return sql<boolean>`(${col(a, 'is_empty')} = 0 AND ${textCompare(fullText(a), op, text)})`;
}

function valueRule(a: string, rule: FilterNode & { kind: 'rule' }): RawBuilder<boolean> {
  const { arg } = rule;
  const empty = sql<boolean>`${col(a, 'is_empty')} = 1`;
  const text = arg.kind === 'text' ? arg.text : '';
  switch (rule.op) {
    case 'is_empty':
      return empty;
    case 'is_not_empty':
      return sql<boolean>`${col(a, 'is_empty')} = 0`;
    case 'eq':
      return arg.kind === 'number' ? sql<boolean>`${col(a, 'num_key')} = ${arg.num}` : textEquals(a, text);
    case 'neq':
      return arg.kind === 'number'
        ? sql<boolean>`(${col(a, 'num_key')} IS NULL OR ${col(a, 'num_key')} <> ${arg.num})`
        : sql<boolean>`(${empty} OR NOT ${sameText(fullText(a), text)})`;
    case 'contains':
      return sql<boolean>`(${like(col(a, 'text_key'), `%${likeEscape(text)}%`)} OR (${col(a, 'text_full')} IS NOT NULL AND ${like(col(a, 'text_full'), `%${likeEscape(text)}%`)}))`;
    case 'not_contains':
      return sql<boolean>`(${empty} OR NOT ${like(fullText(a), `%${likeEscape(text)}%`)})`;
    case 'starts_with':
      return text.length < TEXT_KEY_CHARS ? like(col(a, 'text_key'), `${likeEscape(text)}%`) : like(fullText(a), `${likeEscape(text)}%`);
    case 'ends_with':
      return like(fullText(a), `%${likeEscape(text)}`);
    case 'in':
      return inList(fullText(a), arg.kind === 'list' ? arg.texts : []);
    case 'not_in':
      return sql<boolean>`(${empty} OR NOT ${inList(fullText(a), arg.kind === 'list' ? arg.texts : [])})`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compare(a, rule.op, arg);
  }
}

/** Compiles a checked filter tree to a boolean SQL expression over one `cell_keys` alias per column. */
export function filterSql(node: FilterNode, alias: Alias): RawBuilder<boolean> {
  if (node.kind === 'rule') {
    const a = alias(node.colNo);
    return node.field === 'status' ? statusRule(a, node) : valueRule(a, node);
  }
  if (node.rules.length === 0) return TRUE;
  const parts = node.rules.map((r) => filterSql(r, alias));
  return sql<boolean>`(${sql.join(parts, sql.raw(node.type === 'or' ? ' OR ' : ' AND '))})`;
}

/** ORDER BY terms for sort rules; empty cells sort last in both directions. */
export function sortSql(specs: SortSpec[], alias: Alias): RawBuilder<unknown>[] {
  const out: RawBuilder<unknown>[] = [];
  for (const s of specs) {
    const a = alias(s.colNo);
    const dir = sql.raw(s.desc ? 'DESC' : 'ASC');
    if (s.numeric) out.push(sql`${col(a, 'num_missing')} ASC`, sql`${col(a, 'num_key')} ${dir}`);
    else out.push(sql`${col(a, 'is_empty')} ASC`, sql`${col(a, 'text_key')} ${dir}`);
  }
  return out;
}

/** Every column number a filter tree reads (only those of rules on `field` when given). */
export function filterColumns(node: FilterNode | null, field?: 'value' | 'status', into = new Set<number>()): Set<number> {
  if (!node) return into;
  if (node.kind === 'rule') {
    if (!field || node.field === field) into.add(node.colNo);
  } else for (const r of node.rules) filterColumns(r, field, into);
  return into;
}

/** The sort keys of a row, as SELECT terms `f0, k0, f1, k1, …` (flag and key per sort rule), for seek anchors. */
export function sortKeyTerms(specs: SortSpec[], alias: Alias): RawBuilder<unknown>[] {
  return specs.flatMap((s, i) => {
    const a = alias(s.colNo);
    return s.numeric
      ? [sql`${col(a, 'num_missing')} AS ${sql.raw(`f${i}`)}`, sql`${col(a, 'num_key')} AS ${sql.raw(`k${i}`)}`]
      : [sql`${col(a, 'is_empty')} AS ${sql.raw(`f${i}`)}`, sql`${col(a, 'text_key')} AS ${sql.raw(`k${i}`)}`];
  });
}

/**
 * Rows strictly after `at` in the order of sortSql(specs) then seq (keyset paging). Written as
 * nested OR/AND rather than a row comparison so MariaDB turns it into an index range. A missing
 * number has no key (NULL): such rows tie on it and the next rule, or seq, decides.
 */
export function afterSql(specs: SortSpec[], alias: Alias, seq: RawBuilder<unknown>, at: SeekKey): RawBuilder<boolean> {
  let rest = sql<boolean>`${seq} > ${at.seq}`;
  for (let i = specs.length - 1; i >= 0; i--) {
    const s = specs[i] as SortSpec;
    const [flag, key] = at.keys[i] ?? [1, null];
    const a = alias(s.colNo);
    const flagCol = col(a, s.numeric ? 'num_missing' : 'is_empty');
    const keyCol = col(a, s.numeric ? 'num_key' : 'text_key');
    const beyond = sql.raw(s.desc ? '<' : '>');
    const onKey = key === null ? rest : sql<boolean>`(${keyCol} ${beyond} ${key} OR (${keyCol} = ${key} AND ${rest}))`;
    rest = sql<boolean>`(${flagCol} > ${flag} OR (${flagCol} = ${flag} AND ${onKey}))`;
  }
  // The same bound on the leading index columns as a row value: SQLite turns only this into an
  // index range (the nested form alone makes it scan from the start); MariaDB ignores it.
  const first = specs[0];
  const [flag, key] = at.keys[0] ?? [1, null];
  if (!first) return rest;
  const a = alias(first.colNo);
  const flagCol = col(a, first.numeric ? 'num_missing' : 'is_empty');
  const keyCol = col(a, first.numeric ? 'num_key' : 'text_key');
  const bound =
    first.desc || key === null ? sql<boolean>`${flagCol} >= ${flag}` : sql<boolean>`(${flagCol}, ${keyCol}) >= (${flag}, ${key})`;
  return sql<boolean>`(${bound} AND ${rest})`;
}
