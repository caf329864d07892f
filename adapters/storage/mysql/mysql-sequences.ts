import { sql } from 'kysely';
import type { Sequences } from '../dialect.ts';

export const mysqlSequences: Sequences = {
  // LAST_INSERT_ID(expr) hands the new value back to this connection, with no second statement.
  async advance(db, name, by) {
    const r = await sql`UPDATE id_sequences SET next_value = LAST_INSERT_ID(next_value + ${by}) WHERE name = ${sql.lit(name)}`.execute(db);
    if (r.insertId === undefined) throw new Error(`sequence ${name}: the reservation returned no value`);
    return Number(r.insertId);
  },
};
