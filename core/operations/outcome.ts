import { type ErrorCode, type ErrorDetail, isStoreUnavailable, ServiceError } from '../errors.ts';
import { log } from '../log.ts';

/**
 * A failed call, as both doors report it: REST as `status` + `{"detail": …}` + `headers`, MCP as
 * the error envelope `{ok: false, error: true, code, detail, status_code: status}`. It is made in
 * one place (`failureOf`), so the doors cannot disagree on a failure.
 */
export interface Failure {
  code: ErrorCode;
  status: number;
  detail: ErrorDetail;
  /** HTTP headers of the REST answer (`retry-after` on 429 and 503). */
  headers: Record<string, string>;
  /** Set when the server log holds what happened (5xx we did not expect): the id to look for. */
  requestId?: string;
}

/** What one call of an operation came to, whichever door it came through. */
export type Outcome =
  /** `headers`: what REST sends with the answer (the key's rate-limit headers). */
  { ok: true; status: number; data: unknown; headers: Record<string, string> } | { ok: false; failure: Failure };

/** How long a client should wait while the database is away; outages last seconds, not minutes. */
const STORE_RETRY_AFTER_SECONDS = '5';

/**
 * The one error mapper: a ServiceError keeps its code, status, detail and headers; the database
 * being away is `unavailable` (503, Retry-After), worth a retry rather than a bug report; anything
 * else is `internal_error` (500) with only a request id, its message and stack going to the log.
 */
export function failureOf(e: unknown, requestId: string): Failure {
  if (e instanceof ServiceError) return { code: e.code, status: e.status, detail: e.detail, headers: e.headers };
  const err = e as Error | undefined;
  if (isStoreUnavailable(e)) {
    log.warn('database unreachable', { request_id: requestId, error: err?.message });
    return {
      code: 'unavailable',
      status: 503,
      detail: `The database is unreachable; nothing was changed. Retry in a few seconds (request ${requestId})`,
      headers: { 'retry-after': STORE_RETRY_AFTER_SECONDS },
      requestId,
    };
  }
  log.error('request failed', { request_id: requestId, error: err?.message, stack: err?.stack });
  return {
    code: 'internal_error',
    status: 500,
    detail: `Internal error; the server log has the details under request ${requestId}`,
    headers: {},
    requestId,
  };
}
