import { MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';

/** DATABASE_POOL_SIZE: connections per process to MySQL (default 32, one per concurrent request under load). */
function poolSizeFromEnv(): number {
  const n = Number(process.env.DATABASE_POOL_SIZE ?? 32);
  if (!Number.isInteger(n) || n < 1) throw new Error(`DATABASE_POOL_SIZE must be an integer >= 1, got "${process.env.DATABASE_POOL_SIZE}"`);
  return n;
}

/** Kysely over a mysql2 pool (MySQL 8 or MariaDB 10.6+); `mariadb://` URLs are read as `mysql://`. */
export function connectMysql(url: string, options: { poolSize?: number }): MysqlDialect {
  const pool = createPool({
    uri: url.replace(/^mariadb:/, 'mysql:'),
    connectionLimit: options.poolSize ?? poolSizeFromEnv(),
    charset: 'utf8mb4',
    // SUM()/COUNT() come back as DECIMAL; ask for plain numbers.
    decimalNumbers: true,
    supportBigNumbers: true,
    enableKeepAlive: true,
    // A database that is away answers fast (503), rather than holding requests for long.
    connectTimeout: 3_000,
  });
  return new MysqlDialect({ pool });
}
