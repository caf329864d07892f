import { sql } from 'kysely';
import type { Upsert } from '../dialect.ts';

/** `INSERT … ON CONFLICT (key) DO UPDATE SET col = …`; the inserted value is `excluded.col`. */
export const sqliteUpsert: Upsert = (insert, key, set) =>
  insert.onConflict((oc) => oc.columns(key as never).doUpdateSet(set((column) => sql.ref(`excluded.${column}`)) as never));

export const sqliteUpsertClause = (key: readonly string[], set: readonly string[]): string =>
  `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.map((c) => `${c} = excluded.${c}`).join(', ')}`;
