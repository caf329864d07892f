import type { StorageDialect } from '../dialect.ts';
import { connectMysql } from './mysql-connect.ts';
import { mysqlErrors } from './mysql-errors.ts';
import { mysqlHints } from './mysql-hints.ts';
import { mysqlLimits } from './mysql-limits.ts';
import { mysqlLocking } from './mysql-locking.ts';
import { mysqlSchema } from './mysql-schema.ts';
import { mysqlSequences } from './mysql-sequences.ts';
import { mysqlUpsert, mysqlUpsertClause } from './mysql-upsert.ts';

/** MySQL 8 and MariaDB 10.6+ (production). */
export const mysqlDialect: StorageDialect = {
  name: 'mysql',
  schemes: ['mysql://', 'mariadb://'],
  sharedByConnections: () => true,
  connect: connectMysql,
  errors: mysqlErrors,
  limits: mysqlLimits,
  locking: mysqlLocking,
  upsert: mysqlUpsert,
  upsertClause: mysqlUpsertClause,
  hints: mysqlHints,
  sequences: mysqlSequences,
  schema: mysqlSchema,
};
