import { type Kysely, type MigrationLockOptions, MysqlAdapter, type MysqlPool, sql } from 'kysely';

/** A lock not renewed for this long was left by a process that died while migrating: another may take it. */
const LEASE_SECONDS = 60;
const RENEW_MS = 15_000;
const WAIT_MS = 500;

/**
 * Kysely's MySQL adapter with a migration lock every node of a Galera cluster sees. Kysely's own
 * is GET_LOCK, which Galera does not replicate: two processes starting at once on two nodes would
 * both migrate. Here the lock is the row Kysely keeps in `schema_migrations_lock`, taken by one
 * UPDATE (replicated and certified like any write, so of two nodes' takers one wins) and holding
 * a lease (`is_locked` = the server's time it runs out) that the holder renews from another
 * connection while its migrations run, so a process killed mid-migration holds it one lease at most.
 */
export function galeraSafeAdapter(pool: MysqlPool): MysqlAdapter {
  let renewal: ReturnType<typeof setInterval> | undefined;
  return Object.assign(new MysqlAdapter(), {
    async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
      const table = sql.table(options.lockTable);
      for (;;) {
        const r = await sql`UPDATE ${table} SET is_locked = UNIX_TIMESTAMP() + ${LEASE_SECONDS}
          WHERE id = ${options.lockRowId} AND is_locked < UNIX_TIMESTAMP()`.execute(db);
        if (Number(r.numAffectedRows) === 1) break;
        await Bun.sleep(WAIT_MS);
      }
      const renew = `UPDATE \`${options.lockTable}\` SET is_locked = UNIX_TIMESTAMP() + ${LEASE_SECONDS} WHERE id = ?`;
      renewal = setInterval(() => {
        pool.getConnection((e, c) => {
          if (e) return;
          c.query(renew, [options.lockRowId], () => c.release());
        });
      }, RENEW_MS);
      renewal.unref();
    },
    async releaseMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
      clearInterval(renewal);
      await sql`UPDATE ${sql.table(options.lockTable)} SET is_locked = 0 WHERE id = ${options.lockRowId}`.execute(db);
    },
  });
}
