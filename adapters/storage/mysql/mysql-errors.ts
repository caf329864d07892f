import type { DialectErrors } from '../dialect.ts';

/** Network and server errors of mysql2 that mean the database is away, not that a statement was refused. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ER_CON_COUNT_ERROR']);
const UNREACHABLE_MESSAGE = /ECONNREFUSED|Connection lost|connect ETIMEDOUT|Pool is closed|Can't connect|closed state/i;
/** The connection broke under a statement: the server may or may not have run it. */
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'PROTOCOL_CONNECTION_LOST']);
/** mysql2 refuses to send a statement on a connection already closed (its node died while it sat in the pool). */
const NEVER_SENT = /Can't add new command when connection is in closed state/;

type DriverError = { code?: string; errno?: number; message?: string; cause?: unknown } | undefined;

/**
 * A Galera node that cannot serve — joining, donating by a blocking method, or cut off from the
 * cluster's majority — answers ER_UNKNOWN_COM_ERROR (1047, "WSREP has not yet prepared node for
 * application use") to every statement without running it, or refuses a commit it cannot replicate
 * with ER_ERROR_DURING_COMMIT (1180, "…provider status: Not connected to Primary Component"), the
 * transaction rolled back.
 */
const notReady = (err: DriverError) =>
  err?.errno === 1047 ||
  err?.code === 'ER_UNKNOWN_COM_ERROR' ||
  (err?.errno === 1180 && /provider status|Primary Component/i.test(String(err.message)));

/** mysql2's errors: ER_DUP_ENTRY (1062) for a unique key; connection codes for an outage. */
export const mysqlErrors: DialectErrors = {
  isDuplicateKey(e) {
    const err = e as DriverError;
    return err?.code === 'ER_DUP_ENTRY' || err?.errno === 1062;
  },
  // ER_LOCK_DEADLOCK (1213): InnoDB chose this transaction as the victim and rolled it back; on
  // Galera also a certification failure (another node committed a conflicting write first). Also
  // when the storage layer, having retried it, passed it on as "database away" (its cause).
  isDeadlock(e) {
    for (const err of [e as DriverError, (e as DriverError)?.cause as DriverError]) {
      if (err?.code === 'ER_LOCK_DEADLOCK' || err?.errno === 1213) return true;
    }
    return false;
  },
  isUnavailable(e) {
    const err = e as DriverError;
    if (!err) return false;
    if (notReady(err)) return true;
    if (err.code && UNREACHABLE_CODES.has(err.code)) return true;
    return UNREACHABLE_MESSAGE.test(String(err.message));
  },
  notRun(e) {
    const err = e as DriverError;
    return notReady(err) || NEVER_SENT.test(String(err?.message));
  },
  isConnectionLost(e) {
    const err = e as DriverError;
    return (err?.code !== undefined && LOST_CODES.has(err.code)) || /Connection lost/i.test(String(err?.message));
  },
};
