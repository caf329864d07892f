import { sql } from 'kysely';
import type { SchemaTypes } from '../dialect.ts';

/**
 * SQLite types are affinities: INTEGER is 64-bit, TEXT has no length cap and compares byte-wise
 * (BINARY) by default, so keys need no collation.
 */
export const sqliteSchema: SchemaTypes = {
  tableOptions: () => sql``,
  clusteredTableOptions: sql`WITHOUT ROWID`,
  // INTEGER PRIMARY KEY is the row id: numbered by SQLite.
  autoId: { type: sql`integer`, build: (c) => c.primaryKey() },
  int64: sql`INTEGER`,
  int32: sql`INTEGER`,
  flag: sql`INTEGER`,
  float64: sql`REAL`,
  binaryKey: () => sql`TEXT`,
  asciiKey: () => sql`TEXT`,
  binaryText: sql`TEXT`,
  mediumText: sql`text`,
  longText: sql`text`,
  // TEXT has no length cap in SQLite.
  widenText: async () => {},
};
