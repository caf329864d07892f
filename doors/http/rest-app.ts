import { createHash, timingSafeEqual } from 'node:crypto';
import { type AnyElysia, Elysia } from 'elysia';
import type { Kernel } from '../../core/kernel.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { runCall } from '../../core/operations/run-operation.ts';
import { presentedKeyPrefix } from '../../core/identity/api-keys.ts';
import { accessLog } from './access-log.ts';
import { errorResponse, outcomeResponse } from './error-response.ts';
import { gatherMetrics, renderMetrics } from '../../core/metrics/prometheus.ts';
import { apiDocs, openapiOperation } from './openapi.ts';
import { closingWhileDraining } from './draining.ts';
import { healthRoutes } from './health.ts';
import { restEdge } from './rest-edge.ts';
import { jsonQueryNames, readJson, restQuery } from './rest-input.ts';
import { type RouteMethods, routeMethods } from './route-methods.ts';
import { signinRoutes } from './signin/signin-routes.ts';
import { exportRoute } from './export-route.ts';
import { importRoute } from './import-route.ts';
import { inboundRoute } from './inbound-route.ts';
import { projectEventsRoute } from './project-events-route.ts';
import { accountRoutes } from './account-routes.ts';
import { OAUTH_OPEN_PATHS, oauthRoutes } from './oauth/oauth-routes.ts';
import { consoleRoutes } from './console-routes.ts';
import { loggedRequestId } from './access-log.ts';
import { mountRoutes, type RouteSpec } from './route-chain.ts';

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

/** `GET /metrics`: operators' view of the queues (Prometheus text), outside BASE_PATH like every scrape target. */
function metricsRoute(token: string | undefined): RouteSpec {
  return {
    method: 'GET',
    path: '/metrics',
    outsideBasePath: true,
    caller: 'none',
    async handle({ kernel, request }) {
      if (!metricsAllowed(token, request.headers.get('authorization'))) {
        return Response.json(
          { detail: 'The metrics need a token: send "Authorization: Bearer <METRICS_TOKEN>"' },
          { status: 401, headers: { 'www-authenticate': 'Bearer realm="metrics"' } },
        );
      }
      const { contentType, body } = await renderMetrics(await gatherMetrics(kernel));
      return new Response(body, { headers: { 'content-type': contentType } });
    },
  };
}

/**
 * An operation of the table as a REST route: the chain checks the body and finds a console session
 * (its CSRF token on a write); the call pipeline authenticates the key with the route's project,
 * admits, validates and runs (core/operations/run-operation.ts).
 */
function operationRoute(op: AnyOperation, maxBodyBytes: number): RouteSpec {
  const jsonQuery = jsonQueryNames(op);
  return {
    method: op.method,
    path: op.path,
    caller: 'pipeline',
    ...(op.body ? { body: 'json' as const } : {}),
    doc: openapiOperation(op),
    async handle({ kernel, request, params, requestId, access, session }) {
      const apiKey = request.headers.get('service-api-key');
      // Replaced by the stored prefix once the key is found.
      if (access) access.keyPrefix = presentedKeyPrefix(apiKey);
      const outcome = await runCall(kernel, {
        op,
        requestId,
        access,
        // A long wait (GET /projects/{id}/wait) stops when the client goes away.
        signal: request.signal,
        credentials: session
          ? { caller: { workspace: session.workspace, rateKey: `user:${session.user.id}` } }
          : { apiKey, projectId: op.project ? params.project_id : undefined },
        input: async () => ({
          params,
          query: restQuery(op, request.url, jsonQuery),
          body: op.body ? await readJson(request, maxBodyBytes, op.invalidStatus) : () => undefined,
          idempotencyKey: request.headers.get('idempotency-key') ?? undefined,
        }),
      });
      return outcomeResponse(outcome);
    },
  };
}

/** Every route of the REST door that runs the chain: the operation table and the routes outside it. */
function chainedRoutes(kernel: Kernel, ops: AnyOperation[]): RouteSpec[] {
  return [
    ...ops.map((op) => operationRoute(op, kernel.config.maxBodyBytes)),
    projectEventsRoute,
    exportRoute,
    inboundRoute,
    importRoute,
    ...accountRoutes(kernel),
    ...oauthRoutes(),
    ...signinRoutes(kernel),
    ...consoleRoutes(kernel),
    ...healthRoutes(),
    metricsRoute(kernel.config.metricsToken),
  ];
}

/** The REST door: every route mounted under one app; its path/method list read from what is mounted. */
export function restApp(kernel: Kernel, ops: AnyOperation[]) {
  const docs = `${kernel.config.basePath}/docs`;
  let routes: RouteMethods | undefined;
  // Read once every route is mounted (the first request): a route added later would be missing, none is.
  const mounted: RouteMethods = {
    allowed: (path) => {
      routes ??= routeMethods(app.routes);
      return routes.allowed(path);
    },
  };
  const app = new Elysia({ name: 'workflow-rest' })
    // The later wrap runs outside the earlier one: the access log (one line and an x-request-id
    // for every request, whatever answers it) sees what the edge refuses before routing.
    .wrap(restEdge(kernel.config, mounted, OAUTH_OPEN_PATHS) as never)
    .wrap(((fn: Parameters<typeof accessLog>[0]) => accessLog(closingWhileDraining(kernel.lifecycle, fn))) as never)
    .use(apiDocs(kernel.config));

  mountRoutes(app as unknown as AnyElysia, kernel, chainedRoutes(kernel, ops));
  return app.onError(({ code, error, request }) => {
    if (code === 'NOT_FOUND') return Response.json({ detail: `No such endpoint; see the API docs at ${docs}` }, { status: 404 });
    return errorResponse(error, loggedRequestId(request));
  });
}
