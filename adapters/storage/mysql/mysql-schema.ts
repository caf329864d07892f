import { sql } from 'kysely';
import type { SchemaTypes } from '../dialect.ts';

/** utf8mb4 byte-wise: keys are stored case-folded, so comparing bytes is case-insensitive matching. */
const BIN = sql`CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`;
const TABLE = sql`ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`;

/** InnoDB, utf8mb4 everywhere; InnoDB tables are always clustered by their primary key. */
export const mysqlSchema: SchemaTypes = {
  tableOptions: (collation = 'unicode') => (collation === 'unicode' ? TABLE : sql`ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`),
  clusteredTableOptions: TABLE,
  autoId: { type: sql`bigint`, build: (c) => c.primaryKey().autoIncrement() },
  int64: sql`BIGINT`,
  int32: sql`INT`,
  flag: sql`TINYINT`,
  float64: sql`DOUBLE`,
  binaryKey: (chars) => sql`VARCHAR(${sql.raw(String(chars))}) ${BIN}`,
  asciiKey: (chars) => sql`VARCHAR(${sql.raw(String(chars))}) CHARACTER SET ascii COLLATE ascii_bin`,
  binaryText: sql`MEDIUMTEXT ${BIN}`,
  mediumText: sql`mediumtext`,
  longText: sql`longtext`,

  // TEXT stops at 65,535 bytes: a large but valid value would be a raw driver error.
  async widenText(db, columnsByTable) {
    for (const [table, columns] of Object.entries(columnsByTable)) {
      const { rows } = await sql<{ COLUMN_NAME: string; IS_NULLABLE: string }>`
        SELECT COLUMN_NAME, IS_NULLABLE FROM information_schema.COLUMNS
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table}`.execute(db);
      const nullable = new Map(rows.map((r) => [r.COLUMN_NAME, r.IS_NULLABLE === 'YES']));
      for (const column of columns) {
        if (!nullable.has(column)) continue;
        const modify = nullable.get(column) ? sql`MEDIUMTEXT NULL` : sql`MEDIUMTEXT NOT NULL`;
        await sql`ALTER TABLE ${sql.table(table)} MODIFY ${sql.ref(column)} ${modify}`.execute(db);
      }
    }
  },
};
