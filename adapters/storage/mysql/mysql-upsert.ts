import { sql } from 'kysely';
import type { Upsert } from '../dialect.ts';

/** `INSERT … ON DUPLICATE KEY UPDATE col = …`; the inserted value is `VALUES(col)` (any unique key clashes). */
export const mysqlUpsert: Upsert = (insert, _key, set) =>
  insert.onDuplicateKeyUpdate(set((column) => sql`VALUES(${sql.ref(column)})`) as never);

export const mysqlUpsertClause = (_key: readonly string[], set: readonly string[]): string =>
  `ON DUPLICATE KEY UPDATE ${set.map((c) => `${c} = VALUES(${c})`).join(', ')}`;
