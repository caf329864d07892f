import { resolve } from 'node:path';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type AnyElysia, Elysia } from 'elysia';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isStoreUnavailable, ServiceError } from '../../core/errors.ts';
import { accessLog, accessRecord, loggedRequestId } from '../http/access-log.ts';
import { mountRoutes } from '../http/route-chain.ts';
import { closingWhileDraining } from '../http/draining.ts';
import { healthRoutes } from '../http/health.ts';
import { presentedKeyPrefix } from '../../core/identity/api-keys.ts';
import type { Kernel } from '../../core/kernel.ts';
import { failureOf } from '../../core/operations/outcome.ts';
import { MAX_ID_LENGTH } from '../../core/operations/run-operation.ts';
import { type InexactNumber, inexactNumberError, parseJsonExactly } from '../../core/schema/exact-json.ts';
import { errorEnvelope, failureEnvelope } from './envelope.ts';
import { type McpAuthContext, type McpCaller, authenticateMcp } from './mcp-auth.ts';
import { createMcpServer } from './mcp-server.ts';
import { corsHeaders, type OriginGuard } from './origin-guard.ts';
import { MCP_SCOPES, type McpUrls, protectedResourceMetadata } from '../../core/identity/oauth/resource-urls.ts';
import { statusPage } from './status-page.ts';
import type { McpTool } from './tool-table.ts';
import type { modernMcp } from './mcp-modern.ts';
import { isLegacyRequest } from '@modelcontextprotocol/server';

const ASSETS = resolve(import.meta.dir, 'assets');

/** What the routes need; known only once the listener has its port (MCP_PORT=0 in tests). */
export interface McpHostContext {
  kernel: Kernel;
  urls: McpUrls;
  tools: McpTool[];
  byName: Map<string, McpTool>;
  auth: McpAuthContext;
  guard: OriginGuard;
  /** The handler of MCP 2026-07-28 requests and its listen feed (mcp-modern.ts). */
  modern: ReturnType<typeof modernMcp>;
}

/** HTTP 401 with the RFC 9728 pointer, and the `unauthorized` envelope as body. */
function unauthorizedResponse(e: ServiceError, urls: McpUrls, presented: boolean, requestId: string): Response {
  const description = String((e.detail as { message?: string }).message ?? e.message).replace(/["\\]/g, "'");
  const challenge = [`Bearer resource_metadata="${urls.metadataUrl}"`, `scope="${MCP_SCOPES.join(' ')}"`];
  if (presented) challenge.push('error="invalid_token"', `error_description="${description}"`);
  return Response.json(errorEnvelope(e, requestId), { status: 401, headers: { 'www-authenticate': challenge.join(', ') } });
}

/** What handleMcp read of a POST body: the parsed JSON-RPC for the transport, and the project a lone tools/call names. */
interface RpcBody {
  request: Request;
  parsed?: unknown;
  projectId?: string;
  /** The refusal of a message holding a number JSON cannot carry exactly, answered after authentication. */
  inexact?: Response;
}

/** Bodies read before authentication stay small: a tools/call naming a project, not a large add_rows. */
const PEEK_MAX_BYTES = 65_536;

/**
 * Reads a small POST body once, so authentication can read the key and the project a lone
 * tools/call names in one query (as REST reads its route's project), and the transport does not
 * parse it again. Anything else (no credentials, a large or chunked body, not JSON) goes to the
 * transport as it came, read after authentication; the call then reads its project on its own.
 */
async function readRpcBody(ctx: McpHostContext, request: Request): Promise<RpcBody> {
  const length = Number(request.headers.get('content-length') ?? Number.NaN);
  const credentials = request.headers.has('service-api-key') || request.headers.has('authorization');
  if (request.method !== 'POST' || !credentials || !(length <= PEEK_MAX_BYTES)) return { request };
  const text = await request.text();
  const asItCame = () => ({ request: new Request(request.url, { method: 'POST', headers: request.headers, body: text }) });
  let parsed: ReturnType<typeof parseJsonExactly>;
  try {
    parsed = parseJsonExactly(text);
  } catch {
    return asItCame();
  }
  if (parsed.inexact) return { request, parsed: parsed.value, inexact: inexactRefusal(parsed.value, parsed.inexact) };
  return { request, parsed: parsed.value, projectId: projectNamed(ctx, parsed.value) };
}

const isToolCall = (message: unknown): boolean =>
  typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'tools/call';

/** The project_id argument of a single tools/call message whose tool reads a project (not one too long to be an id). */
function projectNamed(ctx: McpHostContext, message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown; arguments?: { project_id?: unknown } } };
  if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined;
  const projectId = params.arguments?.project_id;
  if (typeof projectId !== 'string' || projectId === '' || projectId.length > MAX_ID_LENGTH) return undefined;
  return ctx.byName.get(params.name)?.op.project ? projectId : undefined;
}

/** MCP 2025-11-25 removed JSON-RPC batches: one message per POST. */
const batchRefusal = () =>
  Response.json(
    {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported (MCP 2025-11-25); send one message per POST' },
      id: null,
    },
    { status: 400 },
  );

/**
 * Refuses a batch. A body read before authentication was parsed then; any other is read now and
 * handed on as it came (the transport answers its size and syntax).
 */
async function singleMessage(body: RpcBody): Promise<RpcBody | Response> {
  if (body.parsed !== undefined) return Array.isArray(body.parsed) ? batchRefusal() : (body.inexact ?? body);
  const { request } = body;
  const text = await request.text();
  if (/^\s*\[/.test(text)) return batchRefusal();
  const again = new Request(request.url, { method: 'POST', headers: request.headers, body: text });
  let parsed: ReturnType<typeof parseJsonExactly> | undefined;
  try {
    parsed = parseJsonExactly(text);
  } catch {
    return { request: again }; // the transport answers the syntax error
  }
  if (parsed.inexact) return inexactRefusal(parsed.value, parsed.inexact);
  // Handed on parsed: the era, progress (a streamed answer) and a listen's resources are read from it.
  return { request: again, parsed: parsed.value };
}

/**
 * A message holding a number JSON cannot carry exactly (12345678901234567890, 1e309): refused as
 * REST refuses it, never handed on rounded (-32602, invalid params, naming the number).
 */
function inexactRefusal(message: unknown, found: InexactNumber): Response {
  const id = (message as { id?: unknown } | null)?.id;
  const error = inexactNumberError('The message', found, 422);
  return Response.json({
    jsonrpc: '2.0',
    error: { code: -32602, message: `Invalid params: ${(error.detail as { message: string }).message}` },
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
  });
}

/**
 * One MCP request, stateless: authenticate, then a fresh server + transport that live for this
 * request only. GET (a server-to-client event stream) and DELETE (end a session) have nothing to
 * do without sessions, so they answer 405 as the streamable HTTP spec allows.
 */
async function handleMcp(ctx: McpHostContext, request: Request): Promise<Response> {
  const access = accessRecord(request);
  const requestId = loggedRequestId(request);
  // The access log names the key by its public prefix only (a wfs_ key's, or the stored one once found).
  if (access) access.keyPrefix = presentedKeyPrefix(request.headers.get('service-api-key'));
  const body = await readRpcBody(ctx, request);
  let authInfo: AuthInfo;
  try {
    authInfo = await authenticateMcp(ctx.auth, request, access, body.projectId);
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'unauthorized') {
      return unauthorizedResponse(e, ctx.urls, request.headers.has('service-api-key') || request.headers.has('authorization'), requestId);
    }
    if (isStoreUnavailable(e) && isToolCall(body.parsed)) {
      // The database away: the tool call still answers its envelope (unavailable, 503), as REST answers 503.
      authInfo = {
        token: '',
        clientId: 'unchecked',
        scopes: [],
        extra: { caller: { method: 'api_key', rateKey: '', denied: e } satisfies McpCaller },
      };
    } else {
      const failure = failureOf(e, requestId);
      return Response.json(failureEnvelope(failure), { status: failure.status, headers: failure.headers });
    }
  }
  if (request.method !== 'POST') {
    return Response.json(
      {
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this stateless server takes JSON-RPC over POST only' },
        id: null,
      },
      { status: 405, headers: { allow: 'POST' } },
    );
  }
  const message = await singleMessage(body);
  if (message instanceof Response) return message;
  // Tool calls name this request's id in their internal_error and unavailable answers, as the access log does.
  authInfo.extra = { ...authInfo.extra, requestId, signal: request.signal };
  // Both protocol eras on one URL, decided per request as the spec's versioning says (the SDK's
  // classifier): a 2025-era message (initialize, or no version envelope) keeps the legacy path.
  if (!(await isLegacy(message))) {
    const held = await listenHeld(ctx, authInfo, message.parsed);
    const refusal = listenRefusal(held.refused, message.parsed);
    if (refusal) return refusal;
    const response = await ctx.modern.handler
      .fetch(message.request, { authInfo, ...(message.parsed !== undefined ? { parsedBody: message.parsed } : {}) })
      .catch((e) => {
        held.release();
        throw e;
      });
    // A listen stream holds its projects' watches until it ends; any other answer holds none.
    if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
      held.release();
      return response;
    }
    return closingWithStream(response, held.release);
  }
  const server = createMcpServer(ctx.kernel, ctx.tools, ctx.byName);
  // A request that asks for progress is answered as an SSE stream (its notifications, then its
  // result); any other as one JSON body.
  const streaming = asksForProgress(message.parsed);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !streaming,
    maxRequestBodySize: ctx.kernel.config.maxBodyBytes,
  });
  await server.connect(transport);
  let response: Response;
  try {
    response = await transport.handleRequest(message.request, {
      authInfo,
      ...(message.parsed !== undefined ? { parsedBody: message.parsed } : {}),
    });
  } catch (e) {
    await server.close();
    throw e;
  }
  if (!streaming || !response.body) {
    // The answer is complete: the per-request server is closed after it goes out, not before.
    void server.close().catch(() => undefined);
    return response;
  }
  return closingWithStream(response, () => void server.close().catch(() => undefined));
}

/**
 * Whether a message is of the 2025 era. The two plain cases are read from the message itself (the
 * SDK's classifier parses and checks it again, a tenth of a millisecond): a request that carries
 * its protocol version in `_meta` is modern, an `initialize` or a request with neither that nor a
 * 2026 version header is legacy. Anything else goes to the classifier, as the spec's versioning asks.
 */
async function isLegacy(message: RpcBody): Promise<boolean> {
  const parsed = message.parsed as { method?: unknown; params?: { _meta?: Record<string, unknown> } } | undefined;
  if (parsed && typeof parsed === 'object' && typeof parsed.method === 'string') {
    const version = parsed.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
    const header = message.request.headers.get('mcp-protocol-version');
    if (typeof version === 'string' && version === header) return false;
    if (version === undefined && (parsed.method === 'initialize' || header === null || header < '2026-07-28')) return true;
  }
  return isLegacyRequest(message.request, message.parsed);
}

/** A `subscriptions/listen` request's projects watched for its stream (refused URIs answered, nothing watched). */
function listenHeld(ctx: McpHostContext, authInfo: AuthInfo, message: unknown) {
  const { method, params } = (message ?? {}) as { method?: unknown; params?: unknown };
  return method === 'subscriptions/listen'
    ? ctx.modern.feed.hold(authInfo, params)
    : Promise.resolve({ refused: [] as string[], release: () => undefined });
}

/** Listening to a resource the caller cannot read is "not found" (-32602, as a read of it is). */
function listenRefusal(refused: string[], message: unknown): Response | undefined {
  if (refused.length === 0) return undefined;
  const id = (message as { id?: unknown } | null)?.id;
  return Response.json({
    jsonrpc: '2.0',
    error: { code: -32602, message: `Resource not found: ${refused[0]?.slice(0, 200)}`, data: { uri: refused[0] } },
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
  });
}

/** Whether a message is a request whose _meta carries a progressToken. */
function asksForProgress(message: unknown): boolean {
  const meta = (message as { params?: { _meta?: { progressToken?: unknown } } } | undefined)?.params?._meta;
  return typeof meta?.progressToken === 'string' || typeof meta?.progressToken === 'number';
}

/**
 * The streamed answer, with the per-request server closed once the stream ends — or once the
 * client goes away, which aborts the call still running (a wait stops at once).
 */
function closingWithStream(response: Response, close: () => void): Response {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        close();
      } else controller.enqueue(value);
    },
    cancel(reason) {
      void reader.cancel(reason).catch(() => undefined);
      close();
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

/** The MCP host: the MCP endpoint plus its unauthenticated status, health, icon and metadata routes. */
export function mcpApp(kernel: Kernel, context: () => McpHostContext) {
  const metadata = () => {
    const ctx = context();
    return Response.json(protectedResourceMetadata(ctx.kernel.config, ctx.urls, ctx.kernel.oauth.issuer), {
      // Public facts: browser-based clients (the MCP Inspector) read them from another origin.
      headers: { 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' },
    });
  };
  const mcp = async ({ request }: { request: Request }) => {
    const ctx = context();
    // Before anything else, credentials included: a page in a browser gets nothing from this host.
    const refusal = ctx.guard.refusal(request);
    if (refusal) return refusal;
    const crossOrigin = ctx.guard.crossOrigin(request);
    if (!crossOrigin) return handleMcp(ctx, request);
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: corsHeaders(crossOrigin, true) });
    const response = await handleMcp(ctx, request);
    for (const [name, value] of Object.entries(corsHeaders(crossOrigin, false))) response.headers.set(name, value);
    return response;
  };
  const app = new Elysia({ name: 'workflow-mcp' })
    // Outermost: one access-log line and an x-request-id for every request, whatever answers it.
    .wrap(((fn: Parameters<typeof accessLog>[0]) => accessLog(closingWhileDraining(kernel.lifecycle, fn))) as never)
    .get('/', () => {
      const ctx = context();
      return new Response(statusPage(ctx.urls, ctx.tools.length, ctx.kernel.oauth.issuer), {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      });
    })
    .get('/healthz', () => Response.json({ status: 'ok' }))
    .get('/favicon.ico', () => new Response(Bun.file(`${ASSETS}/favicon.ico`), { headers: { 'content-type': 'image/x-icon' } }))
    .get('/favicon.png', () => new Response(Bun.file(`${ASSETS}/favicon.png`), { headers: { 'content-type': 'image/png' } }))
    .get('/.well-known/oauth-protected-resource', metadata)
    .get('/.well-known/oauth-protected-resource/*', metadata)
    .all('/mcp', mcp, { parse: 'none' })
    .all('/mcp/', mcp, { parse: 'none' })
    .onError(({ code, error, request }) => {
      if (code === 'NOT_FOUND') return Response.json({ status: 404, detail: 'No such route; the MCP endpoint is /mcp' }, { status: 404 });
      const failure = failureOf(error, loggedRequestId(request));
      return Response.json(failureEnvelope(failure), { status: failure.status, headers: failure.headers });
    });
  // GET /health and /ready, as on the REST host, for the balancer in front of MCP processes.
  mountRoutes(app as unknown as AnyElysia, kernel, healthRoutes());
  return app;
}
