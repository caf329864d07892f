import { isStoreUnavailable, StoreUnavailableError } from '../../core/errors.ts';
import type { DialectErrors } from './dialect.ts';

/**
 * When a statement or a transaction the database refused is sent again, and how often. One policy
 * for both places that redo (failover-driver.ts for single statements, retrying-kysely.ts for
 * whole transactions): a conflict lost to another writer (a deadlock; on Galera a certification
 * failure at commit), a node that refused the work unrun (not ready) or a connection that broke
 * before the work could have taken effect.
 */

/**
 * Runs in all, the first included. A row written without pause from two nodes loses about one
 * certification in three (test/galera-concurrent-writes.test.ts): twelve runs leave a write
 * refused once in about 100,000, and then it is a 503, not a failure.
 */
export const REDO_ATTEMPTS = 12;
const BASE_MS = 10;
const CAP_MS = 500;

/**
 * Bounded exponential backoff with full jitter (a random wait between 0 and base·2^attempt, at most
 * CAP_MS): writers that collided spread out instead of colliding again. Twelve runs wait 3.6 s at
 * most in all, half that on average; the first few, what a lost conflict usually needs, 150 ms.
 */
export function redoDelayMs(attempt: number): number {
  return Math.random() * Math.min(CAP_MS, BASE_MS * 2 ** attempt);
}

/** Commits whose connection broke while the commit was under way: it may have happened, so the work is never redone. */
const outcomeUnknown = new WeakSet<object>();

export function markOutcomeUnknown(e: unknown): void {
  if (typeof e === 'object' && e !== null) outcomeUnknown.add(e);
}

/** The driver's own error, also when it was passed on as StoreUnavailableError. */
const driverError = (e: unknown): unknown => (isStoreUnavailable(e) ? e.cause : e);

/**
 * Whether a whole transaction may run again: it lost a conflict, was refused unrun, or its connection
 * broke before a commit that may have happened. Not when no node accepts a connection: that is the
 * outage the caller answers 503 to at once.
 */
export function transactionRedoable(errors: DialectErrors, e: unknown): boolean {
  const raw = driverError(e);
  if (typeof raw === 'object' && raw !== null && outcomeUnknown.has(raw)) return false;
  return errors.isDeadlock(raw) || errors.notRun(raw) || errors.isConnectionLost(raw);
}

/** Whether one statement outside a transaction may be sent again: it did not run, lost a conflict, or only read. */
export function statementRedoable(errors: DialectErrors, e: unknown, sql: string): boolean {
  if (errors.notRun(e) || errors.isDeadlock(e)) return true;
  return errors.isConnectionLost(e) && /^\s*(select|show|with)\b/i.test(sql);
}

/**
 * Runs `run` until it succeeds, `redoable` says no, or REDO_ATTEMPTS are spent; `before` prepares
 * each new run (a fresh connection). A conflict still lost at the end is passed on as "database
 * away" (503 and Retry-After for a request, a later retry for a job), never as a failure of the work.
 */
export async function redoing<T>(
  errors: DialectErrors,
  run: () => Promise<T>,
  redoable: (e: unknown) => boolean,
  before?: () => Promise<void>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      if (!redoable(e)) throw e;
      if (attempt >= REDO_ATTEMPTS) {
        if (errors.isDeadlock(driverError(e)) && !isStoreUnavailable(e)) {
          throw new StoreUnavailableError(`writes kept conflicting with others (${REDO_ATTEMPTS} runs): ${String((e as Error).message)}`, {
            cause: e,
          });
        }
        throw e;
      }
      await Bun.sleep(redoDelayMs(attempt));
      await before?.();
    }
  }
}
