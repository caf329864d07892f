import { createHash, timingSafeEqual } from 'node:crypto';
import { Elysia } from 'elysia';
import { ServiceError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { runCall } from '../../core/operations/run-operation.ts';
import { presentedKeyPrefix } from '../../core/identity/api-keys.ts';
import { CSRF_HEADER, csrfMatches, csrfRefusal, sessionOf } from '../../core/identity/sessions.ts';
import { accessLog, accessRecord } from './access-log.ts';
import { errorResponse, outcomeResponse } from './error-response.ts';
import { gatherMetrics, renderMetrics } from '../../core/metrics/prometheus.ts';
import { apiDocs, openapiOperation } from './openapi.ts';
import { closingWhileDraining } from './draining.ts';
import { healthRoutes } from './health.ts';
import { mediaTypeRefusal } from './request-checks.ts';
import { restEdge } from './rest-edge.ts';
import { jsonQueryNames, readJson, restQuery } from './rest-input.ts';
import { routeMethods } from './route-methods.ts';
import { signinRoutes } from './signin/signin-routes.ts';
import { exportRoute } from './export-route.ts';
import { importRoute } from './import-route.ts';
import { inboundRoute } from './inbound-route.ts';
import { projectEventsRoute } from './project-events-route.ts';
import { accountRoutes } from './account-routes.ts';
import { OAUTH_OPEN_PATHS, OAUTH_ROUTES, oauthRoutes } from './oauth/oauth-routes.ts';
import { CONSOLE_PAGES, consoleRoutes } from './console-routes.ts';

/**
 * METRICS_TOKEN: when set, /metrics answers only `Authorization: Bearer <token>` (401 otherwise).
 * Both sides are hashed first so the comparison takes the same time whatever their lengths.
 */
function metricsAllowed(token: string | undefined, authorization: string | null): boolean {
  if (!token) return true;
  const presented = /^Bearer[ \t]+(.+)$/i.exec(authorization ?? '')?.[1]?.trim() ?? '';
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(presented), digest(token));
}

function routePath(basePath: string, path: string): string {
  return basePath + path.replace(/\{(\w+)\}/g, ':$1');
}

/** The REST door: one route per operation of the table, mounted under BASE_PATH. */
export function restApp(kernel: Kernel, ops: AnyOperation[]) {
  const { basePath, maxBodyBytes, metricsToken } = kernel.config;
  const docs = `${basePath}/docs`;
  const routes = routeMethods([
    ...ops.map((op) => ({ method: op.method, path: basePath + op.path })),
    ...[
      docs,
      `${docs}/json`,
      `${docs}/assets/:file`,
      '/metrics',
      '/health',
      '/ready',
      '/login',
      '/session',
      ...CONSOLE_PAGES,
      '/console/assets/:file',
    ].map((path) => ({
      method: 'GET',
      path,
    })),
    ...['/login', '/logout'].map((path) => ({ method: 'POST', path })),
    { method: 'GET', path: `${basePath}/projects/{project_id}/events` },
    { method: 'GET', path: `${basePath}/projects/{project_id}/export.csv` },
    { method: 'POST', path: `${basePath}/inbound/{token}` },
    { method: 'POST', path: `${basePath}/projects/import.csv` },
    ...[
      ['GET', '/account/keys'],
      ['POST', '/account/keys'],
      ['POST', '/account/keys/{prefix}/rotate'],
      ['DELETE', '/account/keys/{prefix}'],
      ['GET', '/account/ledger'],
      ['GET', '/account/members'],
      ['POST', '/account/members'],
      ['PATCH', '/account/members/{user_id}'],
      ['DELETE', '/account/members/{user_id}'],
      ['GET', '/account/invitations'],
      ['POST', '/account/invitations/{id}/accept'],
      ['DELETE', '/account/invitations/{id}'],
      ['PUT', '/account/keys/{prefix}/cap'],
      ['GET', '/account/connections'],
      ['DELETE', '/account/connections/{grant_id}'],
      ...OAUTH_ROUTES,
    ].map(([method, path]) => ({ method: method as string, path: path as string })),
  ]);
  const app = new Elysia({ name: 'workflow-rest' })
    // The later wrap runs outside the earlier one: the access log (one line and an x-request-id
    // for every request, whatever answers it) sees what the edge refuses before routing.
    .wrap(restEdge(kernel.config, routes, OAUTH_OPEN_PATHS) as never)
    .wrap(((fn: Parameters<typeof accessLog>[0]) => accessLog(closingWhileDraining(kernel.lifecycle, fn))) as never)
    .use(apiDocs(kernel.config))
    .use(healthRoutes(kernel))
    .use(signinRoutes(kernel))
    .use(projectEventsRoute(kernel))
    .use(exportRoute(kernel))
    .use(inboundRoute(kernel))
    .use(importRoute(kernel))
    .use(accountRoutes(kernel))
    .use(oauthRoutes(kernel))
    .use(consoleRoutes(kernel));

  // Operators' view of the queues (Prometheus text). Outside BASE_PATH, like every scrape target.
  app.get(
    '/metrics',
    async ({ request }) => {
      if (!metricsAllowed(metricsToken, request.headers.get('authorization'))) {
        return Response.json(
          { detail: 'The metrics need a token: send "Authorization: Bearer <METRICS_TOKEN>"' },
          { status: 401, headers: { 'www-authenticate': 'Bearer realm="metrics"' } },
        );
      }
      const { contentType, body } = await renderMetrics(await gatherMetrics(kernel));
      return new Response(body, { headers: { 'content-type': contentType } });
    },
    { detail: { hide: true } },
  );

  for (const op of ops) {
    const route = routePath(basePath, op.path);
    const jsonQuery = jsonQueryNames(op);
    app.route(
      op.method,
      route,
      async ({ request, params }) => {
        const access = accessRecord(request);
        const requestId = access?.id ?? newId();
        const apiKey = request.headers.get('service-api-key');
        if (access) {
          access.route = route;
          access.keyPrefix = presentedKeyPrefix(apiKey); // replaced by the stored prefix once the key is found
        }
        const notJson = op.body ? mediaTypeRefusal(request) : null;
        if (notJson) return errorResponse(notJson, requestId);
        const length = Number(request.headers.get('content-length') ?? 0);
        if (length > maxBodyBytes) {
          return errorResponse(
            new ServiceError('payload_too_large', `The body is ${length} bytes; the limit is ${maxBodyBytes} (MAX_BODY_BYTES)`),
            requestId,
          );
        }
        const pathParams = params as Record<string, string>;
        // Without a key, the console's session (docs/console.md): any plan, and its CSRF token on every write.
        const session = apiKey === null ? await sessionOf(kernel, request.headers.get('cookie')) : undefined;
        if (session && op.method !== 'GET' && !csrfMatches(session, request.headers.get(CSRF_HEADER))) {
          return errorResponse(csrfRefusal(), requestId);
        }
        const outcome = await runCall(kernel, {
          op,
          requestId,
          access,
          // A long wait (GET /projects/{id}/wait) stops when the client goes away.
          signal: request.signal,
          credentials: session
            ? { caller: { workspace: session.workspace, rateKey: `user:${session.user.id}` } }
            : { apiKey, projectId: op.project ? pathParams.project_id : undefined },
          input: async () => ({
            params: pathParams,
            query: restQuery(op, request.url, jsonQuery),
            body: op.body ? await readJson(request, op, maxBodyBytes) : () => undefined,
            idempotencyKey: request.headers.get('idempotency-key') ?? undefined,
          }),
        });
        return outcomeResponse(outcome);
      },
      { parse: 'none', detail: openapiOperation(op) as never },
    );
  }

  return app.onError(({ code, error, request }) => {
    if (code === 'NOT_FOUND') return Response.json({ detail: `No such endpoint; see the API docs at ${docs}` }, { status: 404 });
    return errorResponse(error, accessRecord(request)?.id ?? newId());
  });
}
