import type { DialectErrors } from '../dialect.ts';

/** Network and server errors of mysql2 that mean the database is away, not that a statement was refused. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ER_CON_COUNT_ERROR']);
const UNREACHABLE_MESSAGE = /ECONNREFUSED|Connection lost|connect ETIMEDOUT|Pool is closed|Can't connect/i;

/** mysql2's errors: ER_DUP_ENTRY (1062) for a unique key; connection codes for an outage. */
export const mysqlErrors: DialectErrors = {
  isDuplicateKey(e) {
    const err = e as { code?: string; errno?: number } | undefined;
    return err?.code === 'ER_DUP_ENTRY' || err?.errno === 1062;
  },
  // ER_LOCK_DEADLOCK (1213): InnoDB chose this transaction as the victim and rolled it back.
  isDeadlock(e) {
    const err = e as { code?: string; errno?: number } | undefined;
    return err?.code === 'ER_LOCK_DEADLOCK' || err?.errno === 1213;
  },
  isUnavailable(e) {
    const err = e as { code?: string; message?: string } | undefined;
    if (!err) return false;
    if (err.code && UNREACHABLE_CODES.has(err.code)) return true;
    return UNREACHABLE_MESSAGE.test(String(err.message));
  },
};
