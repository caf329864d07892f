import type { DialectErrors } from '../dialect.ts';

/** bun:sqlite's errors: a UNIQUE constraint; a database file another writer holds past busy_timeout. */
export const sqliteErrors: DialectErrors = {
  isDuplicateKey: (e) => /UNIQUE constraint failed/i.test(String((e as { message?: string } | undefined)?.message)),
  // One connection per process writes in turn; a busy file is reported as unavailable above.
  isDeadlock: () => false,
  // An embedded file: no server to refuse a statement, no connection to break.
  notRun: () => false,
  isConnectionLost: () => false,
  isUnavailable(e) {
    const err = e as { code?: string; message?: string } | undefined;
    if (!err) return false;
    return err.code === 'SQLITE_BUSY' || /database is locked/i.test(String(err.message));
  },
};
