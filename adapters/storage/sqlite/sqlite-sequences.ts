import { sql } from 'kysely';
import type { Sequences } from '../dialect.ts';

export const sqliteSequences: Sequences = {
  async advance(db, name, by) {
    const r = await sql<{
      next_value: number;
    }>`UPDATE id_sequences SET next_value = next_value + ${by} WHERE name = ${sql.lit(name)} RETURNING next_value`.execute(db);
    const row = r.rows[0];
    if (!row) throw new Error(`sequence ${name} is missing; run migrations`);
    return Number(row.next_value);
  },
};
