import { isStoreUnavailable, ServiceError } from '../errors.ts';
import { log } from '../log.ts';

/** Maps any failure to the REST error body `{"detail": ...}`; unexpected errors leak no internals. */
export function errorResponse(e: unknown, requestId: string): Response {
  if (e instanceof ServiceError) {
    return Response.json({ detail: e.detail }, { status: e.status, headers: e.headers });
  }
  const err = e as Error;
  if (isStoreUnavailable(e)) {
    log.warn('database unreachable', { request_id: requestId, error: err?.message });
    return Response.json(
      { detail: `The database is unreachable; nothing was changed. Retry in a few seconds (request ${requestId})` },
      { status: 503, headers: { 'retry-after': '5' } },
    );
  }
  log.error('request failed', { request_id: requestId, error: err?.message, stack: err?.stack });
  return Response.json({ detail: `Internal error; the server log has the details under request ${requestId}` }, { status: 500 });
}
