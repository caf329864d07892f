import { type CompiledQuery, createQueryId, type Kysely, RawNode } from 'kysely';

/**
 * A multi-row INSERT written by hand. Kysely's builder makes (and freezes) an operation node per
 * value, which was most of the CPU of small, frequent inserts (32 concurrent single-row POSTs
 * coalesce into one insert of 32 rows × every column). Same `?` placeholders on both dialects.
 */
export async function insertMany<T extends object>(db: Kysely<never> | Kysely<any>, table: string, columns: readonly (keyof T & string)[], rows: T[]): Promise<void> {
  if (rows.length === 0) return;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const params: unknown[] = [];
  for (const row of rows) for (const c of columns) params.push(row[c] ?? null);
  const text = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${new Array(rows.length).fill(tuple).join(", ")}`;
  // Not CompiledQuery.raw: it freezes the parameter array, which costs more than building it.
  const query: CompiledQuery = { sql: text, query: RawNode.createWithSql(text), parameters: params, queryId: createQueryId() };
  await db.executeQuery(query);
}
