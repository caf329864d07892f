import type { StorageDialect } from '../dialect.ts';
import { connectSqlite } from './sqlite-connect.ts';
import { sqliteErrors } from './sqlite-errors.ts';
import { sqliteHints } from './sqlite-hints.ts';
import { sqliteLimits } from './sqlite-limits.ts';
import { sqliteLocking } from './sqlite-locking.ts';
import { sqliteSchema } from './sqlite-schema.ts';
import { sqliteSequences } from './sqlite-sequences.ts';
import { sqliteUpsert, sqliteUpsertClause } from './sqlite-upsert.ts';

/** Embedded SQLite through bun:sqlite (the default: nothing to install). */
export const sqliteDialect: StorageDialect = {
  name: 'sqlite',
  schemes: ['sqlite:'],
  connect: connectSqlite,
  sharedByConnections: (url) => !['', ':memory:'].includes(url.slice('sqlite:'.length)),
  errors: sqliteErrors,
  limits: sqliteLimits,
  locking: sqliteLocking,
  upsert: sqliteUpsert,
  upsertClause: sqliteUpsertClause,
  hints: sqliteHints,
  sequences: sqliteSequences,
  schema: sqliteSchema,
};
