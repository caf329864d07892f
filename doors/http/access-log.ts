import { newId } from '../../core/ids.ts';
import type { KeyHolder } from '../../core/identity/api-keys.ts';
import { log } from '../../core/log.ts';
import { pathOf, withHeaders } from './messages.ts';

/**
 * One JSON line per HTTP request, for both doors (REST and MCP), and the request id every answer
 * carries as `x-request-id`. The line names the route template when the handler knows it
 * (`/api/enterprise/projects/:project_id/rows`), else the path; never the query string (filters may
 * hold tenant data) nor the key (only its public prefix, once authentication has found it).
 */
export interface AccessRecord extends KeyHolder {
  /** The request id: the caller's `x-request-id` when it is a short plain token, else a new one. */
  id: string;
  start: number;
  /** The route template, set by the handler that served the request. */
  route: string | null;
}

const records = new WeakMap<Request, AccessRecord>();

/** A caller's id we may repeat in logs and headers: short, and nothing but token characters. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestIdOf(header: string | null): string {
  return header !== null && SANE_ID.test(header) ? header : newId();
}

/** The request id the access log gave this request (x-request-id and the log line carry it); a new one outside it. */
export const loggedRequestId = (request: Request): string => accessRecord(request)?.id ?? newId();

/** What the access log knows of this request so far (handlers fill in route, key and workspace). */
export function accessRecord(request: Request): AccessRecord | undefined {
  return records.get(request);
}

function writeLine(request: Request, record: AccessRecord, status: number): void {
  log.info('request', {
    method: request.method,
    route: record.route ?? pathOf(request.url),
    status,
    ms: Math.round((performance.now() - record.start) * 10) / 10,
    key_prefix: record.keyPrefix,
    workspace_id: record.workspaceId,
    request_id: record.id,
  });
}

type Handler = (request: Request) => unknown;

/**
 * An Elysia higher-order function (`app.wrap(accessLog)`): it sees every request of the app,
 * whatever route answers it (404s and errors too), before and after the whole handler chain.
 */
export function accessLog(fn: Handler): Handler {
  return (request: Request) => {
    const record: AccessRecord = {
      id: requestIdOf(request.headers.get('x-request-id')),
      start: performance.now(),
      route: null,
      keyPrefix: null,
      workspaceId: null,
    };
    records.set(request, record);
    const finish = (res: unknown) => {
      if (!(res instanceof Response)) return res;
      writeLine(request, record, res.status);
      return withHeaders(res, { 'x-request-id': record.id });
    };
    const failed = (e: unknown) => {
      writeLine(request, record, 500);
      throw e;
    };
    let out: unknown;
    try {
      out = fn(request);
    } catch (e) {
      failed(e);
    }
    return out instanceof Promise ? out.then(finish, failed) : finish(out);
  };
}
