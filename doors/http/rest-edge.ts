import type { Config } from '../../core/config.ts';
import { ServiceError } from '../../core/errors.ts';
import { loggedRequestId } from './access-log.ts';
import { cors, OPEN_CORS_HEADERS } from './cors.ts';
import { errorResponse } from './error-response.ts';
import { pathOf, withHeaders } from './messages.ts';
import { headerBlockRefusal } from './request-checks.ts';
import type { RouteMethods } from './route-methods.ts';

type Handler = (request: Request) => unknown;

/**
 * What the REST door answers before routing, and adds to every answer after it: a JSON 431 for a
 * URL and headers over MAX_HEADER_BYTES, OPTIONS (CORS preflight or not) and 405 + Allow for a known
 * path asked with another method, then the CORS headers of CORS_ORIGINS on whatever answered
 * (of every origin on `openPaths`, the OAuth endpoints that no cookie reaches).
 * An Elysia higher-order function, run inside the access log (which names every answer's id).
 */
export function restEdge(
  config: Pick<Config, 'corsOrigins' | 'maxHeaderBytes' | 'basePath'>,
  routes: RouteMethods,
  openPaths: ReadonlySet<string> = new Set(),
) {
  const configured = cors(config.corsOrigins);
  const open = cors(['*'], OPEN_CORS_HEADERS);
  const searchPath = `${config.basePath}/projects/{project_id}/rows/search`;
  return (fn: Handler): Handler =>
    (request: Request) => {
      const origin = request.headers.get('origin');
      const path = pathOf(request.url);
      const policy = openPaths.has(path) ? open : configured;
      const answer = (res: Response, headers: Record<string, string> = {}) =>
        withHeaders(res, { ...headers, ...policy.answerHeaders(origin) });
      const refuse = (e: ServiceError, headers: Record<string, string> = {}) => answer(errorResponse(e, loggedRequestId(request)), headers);

      const tooLarge = headerBlockRefusal(request, config.maxHeaderBytes, searchPath);
      if (tooLarge) return refuse(tooLarge);
      const methods = routes.allowed(path);
      if (methods) {
        const allow = methods.join(', ');
        if (request.method === 'OPTIONS') {
          const preflight = policy.preflightHeaders(origin, methods);
          return withHeaders(new Response(null, { status: 204 }), { allow, ...preflight });
        }
        if (!methods.includes(request.method)) {
          return refuse(new ServiceError('method_not_allowed', `This endpoint answers ${allow}; not ${request.method}`), { allow });
        }
      }
      const out = fn(request);
      const decorate = (res: unknown) => (res instanceof Response ? answer(res) : res);
      return out instanceof Promise ? out.then(decorate) : decorate(out);
    };
}
