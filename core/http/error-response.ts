import { ServiceError } from '../errors.ts';
import { log } from '../log.ts';

/** Maps any failure to the REST error body `{"detail": ...}`; unexpected errors leak no internals. */
export function errorResponse(e: unknown, requestId: string): Response {
  if (e instanceof ServiceError) {
    return Response.json({ detail: e.detail }, { status: e.status, headers: e.headers });
  }
  const err = e as Error;
  const unreachable = /ECONNREFUSED|PROTOCOL_CONNECTION_LOST|ETIMEDOUT|Connection lost|database is locked/i.test(String(err?.message));
  log.error('request failed', { request_id: requestId, error: err?.message, stack: err?.stack });
  if (unreachable) {
    return Response.json({ detail: `The database is unreachable; retry shortly (request ${requestId})` }, { status: 503, headers: { 'retry-after': '5' } });
  }
  return Response.json({ detail: `Internal error; the server log has the details under request ${requestId}` }, { status: 500 });
}
