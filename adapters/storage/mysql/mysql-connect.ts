import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import type { Tables } from '../tables.ts';

/** Kysely over a mysql2 pool (MySQL 8 or MariaDB 10.6+). */
export function connectMysql(url: string, poolSize: number): Kysely<Tables> {
  const pool = createPool({
    uri: url,
    connectionLimit: poolSize,
    charset: 'utf8mb4',
    // SUM()/COUNT() come back as DECIMAL; ask for plain numbers.
    decimalNumbers: true,
    supportBigNumbers: true,
    enableKeepAlive: true,
    // A database that is away answers fast (503), rather than holding requests for long.
    connectTimeout: 3_000,
  });
  return new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) });
}
