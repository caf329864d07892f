import type { AnyElysia } from 'elysia';
import { ServiceError } from '../../core/errors.ts';
import { authenticateFor } from '../../core/identity/api-keys.ts';
import { CSRF_HEADER, csrfMatches, csrfRefusal, sessionOf } from '../../core/identity/sessions.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Project, Workspace } from '../../core/model.ts';
import type { FoundSession } from '../../core/ports/storage.ts';
import { admitCall } from '../../core/services/admission.ts';
import { type AccessRecord, accessRecord, loggedRequestId } from './access-log.ts';
import { errorResponse } from './error-response.ts';
import { withHeaders } from './messages.ts';
import type { Json } from './openapi-schemas.ts';
import { mediaTypeRefusal } from './request-checks.ts';
import { readJson } from './rest-input.ts';
import { chainedRouteDoc } from './route-doc.ts';

/**
 * The one chain every HTTP route runs (docs/architecture.md, "One way in"): the access log's request
 * id → the outcome mapper → the body checks (media type, size) → the caller (an API key, or a console
 * session with its CSRF token on a write) → admission (plan, rate; its RateLimit-* headers on the
 * answer) → the route's handler. The operation table's routes run it too, leaving the key to the
 * call pipeline (which reads it together with the route's project).
 */

/** Who may call a route. */
export type CallerNeed =
  /** No caller: a page, or a credential of the route's own (an inbound URL, OAuth). */
  | 'none'
  /** A console session; its CSRF token on every write. */
  | 'session'
  /** The service-api-key header, or a console session (CSRF on writes); admitted by plan and rate. */
  | 'key-or-session'
  /** The operation pipeline authenticates the key; the chain reads only a session and its CSRF token. */
  | 'pipeline';

/** The caller the chain found. */
export interface RouteCaller {
  workspace: Workspace;
  /** Whose request budget the call spends (per key, or per person). */
  rateKey: string;
  keyId?: string;
  session?: FoundSession;
  /** With `projectParam`: the caller's live project of that id, read with the key (null: none in this workspace). */
  project?: Project | null;
}

export interface RouteContext {
  kernel: Kernel;
  request: Request;
  params: Record<string, string>;
  /** The access log's request id: what x-request-id, the log line and any error's "request X" name. */
  requestId: string;
  access: AccessRecord | undefined;
  caller?: RouteCaller;
  /** Who the route asked for, for this request. */
  need?: CallerNeed;
  /** A console session presented without an API key (the 'pipeline' routes' caller). */
  session?: FoundSession;
  /** The body as exact JSON (a number JSON would change is refused); read once, when asked. `emptyAs`: an empty body's meaning. */
  json(emptyAs?: () => unknown): Promise<unknown>;
  /** Headers the chain adds to the answer (RateLimit-*). */
  answerHeaders: Record<string, string>;
  /** The listener, for the client's address. */
  server: { requestIP(r: Request): { address: string } | null } | null;
}

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI form, `{name}` for a parameter; under BASE_PATH unless `outsideBasePath`. */
  path: string;
  outsideBasePath?: boolean;
  /** Who may call; a function when the request decides (a signed download link needs no caller). */
  caller: CallerNeed | ((request: Request) => CallerNeed);
  /** 'json': a JSON body (415 for another media type, 413 past `maxBodyBytes`); 'stream': the handler reads it. */
  body?: 'json' | 'stream';
  /** Default MAX_BODY_BYTES. */
  maxBodyBytes?: number;
  /** Take a JSON body whatever its Content-Type says (senders the service does not control). */
  anyMediaType?: boolean;
  /** The path parameter naming the caller's project: read with the key, another workspace's is a 404. */
  projectParam?: string;
  /** The route's OpenAPI entry; routes of the console and sign-in stay out of the API docs. */
  doc?: Json;
  /** How a failure is answered (OAuth answers RFC 6749 errors); default `{"detail": …}`. */
  failure?: (e: unknown, requestId: string) => Response;
  handle(ctx: RouteContext): Promise<Response>;
}

type Step = (spec: RouteSpec, ctx: RouteContext, next: () => Promise<Response>) => Promise<Response>;

const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD';

/** Failures become answers, each naming the request id the access log and x-request-id carry. */
const mapOutcome: Step = async (spec, ctx, next) => {
  try {
    return await next();
  } catch (e) {
    return (spec.failure ?? errorResponse)(e, ctx.requestId);
  }
};

/** A JSON body must say so (415) and fit its limit (413) before anything reads it. */
const checkBody: Step = async (spec, ctx, next) => {
  if (spec.body !== 'json') return next();
  const refusal = spec.anyMediaType ? null : mediaTypeRefusal(ctx.request);
  if (refusal) throw refusal;
  const max = spec.maxBodyBytes ?? ctx.kernel.config.maxBodyBytes;
  const length = Number(ctx.request.headers.get('content-length') ?? 0);
  if (length > max) throw new ServiceError('payload_too_large', `The body is ${length} bytes; the limit is ${max} (MAX_BODY_BYTES)`);
  let parsed: Promise<() => unknown> | undefined;
  ctx.json = async (emptyAs) => {
    parsed ??= readJson(ctx.request, max, 422, emptyAs);
    return (await parsed)();
  };
  return next();
};

async function sessionCaller(kernel: Kernel, request: Request, method: string): Promise<FoundSession | undefined> {
  const session = await sessionOf(kernel, request.headers.get('cookie'));
  if (session && isWrite(method) && !csrfMatches(session, request.headers.get(CSRF_HEADER))) throw csrfRefusal();
  return session;
}

/** The caller: by key, or by session (CSRF on a write), as the route needs. */
const findCaller: Step = async (spec, ctx, next) => {
  const { kernel, request } = ctx;
  const apiKey = request.headers.get('service-api-key');
  const projectId = spec.projectParam ? ctx.params[spec.projectParam] : undefined;
  const need = typeof spec.caller === 'function' ? spec.caller(request) : spec.caller;
  ctx.need = need;
  if (need === 'none') return next();
  if (need === 'pipeline') {
    if (apiKey === null) ctx.session = await sessionCaller(kernel, request, spec.method);
    return next();
  }
  if (need === 'key-or-session' && apiKey !== null) {
    const found = await authenticateFor(kernel.storage.workspaces, apiKey, projectId, ctx.access);
    ctx.caller = { workspace: found.workspace, rateKey: found.rateKey, keyId: found.keyId, project: found.project ?? null };
  } else {
    const session = await sessionCaller(kernel, request, spec.method);
    if (!session) {
      throw new ServiceError(
        'unauthorized',
        need === 'session'
          ? 'Sign in first (/login): this is managed from a console session'
          : 'Missing API key: send it in the service-api-key header (or sign in at /login)',
      );
    }
    const project = projectId === undefined ? undefined : ((await kernel.storage.projects.get(session.workspace.id, projectId)) ?? null);
    ctx.caller = { workspace: session.workspace, rateKey: `user:${session.user.id}`, session, project };
  }
  if (projectId !== undefined && !ctx.caller.project) {
    throw new ServiceError('not_found', `Project ${projectId} not found (or not in this workspace)`);
  }
  return next();
};

/** Key callers are admitted like any call (plan, rate): 429 with Retry-After over the rate, RateLimit-* on every answer. */
const admit: Step = async (_spec, ctx, next) => {
  if (!ctx.caller || ctx.need !== 'key-or-session') return next();
  ctx.answerHeaders = await admitCall(ctx.kernel, ctx.caller.workspace, ctx.caller.rateKey);
  return next();
};

const STEPS: Step[] = [mapOutcome, checkBody, findCaller, admit];

/** Elysia's path form of an OpenAPI path. */
export const elysiaPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** The full OpenAPI-form path of a route. */
export const routePathOf = (kernel: Kernel, spec: RouteSpec) => (spec.outsideBasePath ? '' : kernel.config.basePath) + spec.path;

/** Runs `spec` through the chain for one request. */
export async function runRoute(
  kernel: Kernel,
  spec: RouteSpec,
  request: Request,
  params: Record<string, string>,
  server: RouteContext['server'] = null,
): Promise<Response> {
  const access = accessRecord(request);
  const route = routePathOf(kernel, spec);
  if (access) access.route = route;
  const ctx: RouteContext = {
    kernel,
    request,
    params,
    requestId: loggedRequestId(request),
    access,
    json: async () => {
      throw new ServiceError('validation_error', 'This endpoint takes no body');
    },
    answerHeaders: {},
    server,
  };
  const run = STEPS.reduceRight<() => Promise<Response>>(
    (next, step) => () => step(spec, ctx, next),
    () => spec.handle(ctx),
  );
  const res = await run();
  return Object.keys(ctx.answerHeaders).length > 0 ? withHeaders(res, ctx.answerHeaders) : res;
}

/** Mounts routes on an Elysia app, each through the chain; their OpenAPI entries go with them. */
export function mountRoutes(app: AnyElysia, kernel: Kernel, specs: RouteSpec[]): void {
  for (const spec of specs) {
    app.route(
      spec.method,
      elysiaPath(routePathOf(kernel, spec)),
      (context: { [x: string]: unknown }) =>
        runRoute(
          kernel,
          spec,
          context.request as Request,
          context.params as Record<string, string>,
          context.server as RouteContext['server'],
        ),
      // The operations' entries are whole already (openapi-operation.ts); the others get the chain's statuses added.
      {
        parse: 'none',
        detail: (!spec.doc ? { hide: true } : spec.caller === 'pipeline' ? spec.doc : chainedRouteDoc(spec, spec.doc)) as never,
      },
    );
  }
}
