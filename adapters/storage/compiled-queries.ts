import { type CompiledQuery, createQueryId, type Kysely, type RawBuilder, RawNode, sql } from 'kysely';

/** `items` in slices of at most `size` (IN lists, multi-row statements). */
export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * `items` in slices of at most `size` items and about `maxChars` characters (as `charsOf` counts
 * them; an item larger than that is a slice of its own): a multi-row statement of large rows stays
 * far below the database's packet size (MariaDB's max_allowed_packet, 16 MB by default).
 */
export function chunksBySize<T>(items: T[], size: number, maxChars: number, charsOf: (item: T) => number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let chars = 0;
  for (const item of items) {
    const n = charsOf(item);
    if (current.length > 0 && (current.length >= size || chars + n > maxChars)) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += n;
  }
  if (current.length) out.push(current);
  return out;
}

/**
 * Integers as the literal list `(1, 2, 3)`, for `IN`: Kysely makes and freezes a node per value and
 * the driver escapes each, which was a fifth of a worker's CPU on the IN lists of an 800-row job.
 * Only safe integers are written into the text (anything else throws), so nothing can be injected.
 */
export function integerList(values: readonly number[]): RawBuilder<number> {
  if (values.length === 0) throw new Error('integerList: an empty IN list is not SQL');
  assertIntegers(values);
  return sql.raw<number>(`(${values.join(', ')})`);
}

/** Throws unless every value is a safe integer: the check before integers are written into SQL text. */
export function assertIntegers(values: readonly number[]): void {
  for (const v of values) if (!Number.isSafeInteger(v)) throw new Error(`${String(v)} is not an integer: it is not written into SQL`);
}

/**
 * A multi-row INSERT written by hand. Kysely's builder makes (and freezes) an operation node per
 * value, which was most of the CPU of small, frequent inserts (32 concurrent single-row POSTs
 * coalesce into one insert of 32 rows × every column). Same `?` placeholders on both dialects.
 */
export async function insertMany<T extends object>(
  // biome-ignore lint/suspicious/noExplicitAny: a statement written by hand, for any table of any schema
  db: Kysely<any>,
  table: string,
  columns: readonly (keyof T & string)[],
  rows: T[],
  /** SQL text after the values: the dialect's `upsertClause`, for an upsert. */
  onClash = '',
): Promise<void> {
  if (rows.length === 0) return;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const params: unknown[] = [];
  for (const row of rows) for (const c of columns) params.push(row[c] ?? null);
  const text = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${new Array(rows.length).fill(tuple).join(', ')}${onClash && ` ${onClash}`}`;
  // Not CompiledQuery.raw: it freezes the parameter array, which costs more than building it.
  const query: CompiledQuery = { sql: text, query: RawNode.createWithSql(text), parameters: params, queryId: createQueryId() };
  await db.executeQuery(query);
}

/** A hot query compiled once: its SQL text, and where each call's values go among its parameters. */
export interface ReusableQuery<R> {
  // biome-ignore lint/suspicious/noExplicitAny: runs on whichever connection or transaction the caller holds
  run(db: Kysely<any>, values: Record<string, unknown>): Promise<R[]>;
}

/**
 * Compiles a query built with Kysely once, with marker values standing for `names`; each run
 * substitutes the call's values. For queries on every request (API key lookup), where building
 * the query tree costs more than running it.
 */
export function reusableQuery<R>(
  names: string[],
  // biome-ignore lint/suspicious/noExplicitAny: a marker value stands where the query expects any column's type
  build: (value: (name: string) => any) => { compile(): CompiledQuery<R> },
): ReusableQuery<R> {
  const marker = (name: string) => `\u0000${name}\u0000`;
  const compiled = build(marker).compile();
  const slots = compiled.parameters.map((p) => {
    const name = names.find((n) => p === marker(n));
    return name === undefined ? { fixed: p, name: undefined } : { name };
  });
  for (const n of names) {
    if (!slots.some((s) => s.name === n) || compiled.sql.includes(marker(n)))
      throw new Error(`reusableQuery: "${n}" must be a bound parameter of the query`);
  }
  return {
    async run(target, values) {
      const parameters = slots.map((s) => (s.name === undefined ? s.fixed : values[s.name]));
      const query: CompiledQuery<R> = { sql: compiled.sql, query: compiled.query, parameters, queryId: createQueryId() };
      return (await target.executeQuery(query)).rows;
    },
  };
}
