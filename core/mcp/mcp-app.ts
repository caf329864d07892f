import { resolve } from 'node:path';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Elysia } from 'elysia';
import { ServiceError } from '../errors.ts';
import { accessLog, accessRecord } from '../http/access-log.ts';
import { presentedKeyPrefix } from '../services/api-keys.ts';
import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import { errorEnvelope } from './envelope.ts';
import { type McpAuthContext, authenticateMcp } from './mcp-auth.ts';
import { createMcpServer } from './mcp-server.ts';
import { type McpUrls, protectedResourceMetadata } from './resource-urls.ts';
import { statusPage } from './status-page.ts';
import type { McpTool } from './tool-table.ts';

const ASSETS = resolve(import.meta.dir, 'assets');

/** What the routes need; known only once the listener has its port (MCP_PORT=0 in tests). */
export interface McpHostContext {
  kernel: Kernel;
  urls: McpUrls;
  tools: McpTool[];
  byName: Map<string, McpTool>;
  auth: McpAuthContext;
}

/** HTTP 401 with the RFC 9728 pointer, and the `unauthorized` envelope as body. */
function unauthorizedResponse(e: ServiceError, urls: McpUrls, presented: boolean, requestId: string): Response {
  const description = String((e.detail as { message?: string }).message ?? e.message).replace(/["\\]/g, "'");
  const challenge = [`Bearer resource_metadata="${urls.metadataUrl}"`];
  if (presented) challenge.push('error="invalid_token"', `error_description="${description}"`);
  return Response.json(errorEnvelope(e, requestId), { status: 401, headers: { 'www-authenticate': challenge.join(', ') } });
}

/**
 * One MCP request, stateless: authenticate, then a fresh server + transport that live for this
 * request only. GET (a server-to-client event stream) and DELETE (end a session) have nothing to
 * do without sessions, so they answer 405 as the streamable HTTP spec allows.
 */
async function handleMcp(ctx: McpHostContext, request: Request): Promise<Response> {
  const access = accessRecord(request);
  const requestId = access?.id ?? newId();
  // The access log names the key by its public prefix only (a wfs_ key's, or the stored one once found).
  if (access) access.keyPrefix = presentedKeyPrefix(request.headers.get('service-api-key'));
  let authInfo;
  try {
    authInfo = await authenticateMcp(ctx.auth, request, access);
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'unauthorized') {
      return unauthorizedResponse(e, ctx.urls, request.headers.has('service-api-key') || request.headers.has('authorization'), requestId);
    }
    const envelope = errorEnvelope(e, requestId);
    return Response.json(envelope, { status: envelope.status_code });
  }
  if (request.method !== 'POST') {
    return Response.json(
      { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this stateless server takes JSON-RPC over POST only' }, id: null },
      { status: 405, headers: { allow: 'POST' } },
    );
  }
  const server = createMcpServer(ctx.kernel, ctx.tools, ctx.byName);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: ctx.kernel.config.maxBodyBytes,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { authInfo });
  } finally {
    await server.close();
  }
}

/** The MCP host: the MCP endpoint plus its unauthenticated status, health, icon and metadata routes. */
export function mcpApp(context: () => McpHostContext) {
  const metadata = () => {
    const ctx = context();
    return Response.json(protectedResourceMetadata(ctx.kernel.config, ctx.urls), { headers: { 'cache-control': 'public, max-age=3600' } });
  };
  const health = () => Response.json({ status: 'ok' });
  const mcp = ({ request }: { request: Request }) => handleMcp(context(), request);
  return new Elysia({ name: 'workflow-mcp' })
    // Outermost: one access-log line and an x-request-id for every request, whatever answers it.
    .wrap(accessLog as never)
    .get('/', () => {
      const ctx = context();
      return new Response(statusPage(ctx.urls, ctx.tools.length), { headers: { 'content-type': 'text/html; charset=utf-8' } });
    })
    .get('/health', health)
    .get('/healthz', health)
    .get('/favicon.ico', () => new Response(Bun.file(`${ASSETS}/favicon.ico`), { headers: { 'content-type': 'image/x-icon' } }))
    .get('/favicon.png', () => new Response(Bun.file(`${ASSETS}/favicon.png`), { headers: { 'content-type': 'image/png' } }))
    .get('/.well-known/oauth-protected-resource', metadata)
    .get('/.well-known/oauth-protected-resource/*', metadata)
    .all('/mcp', mcp, { parse: 'none' })
    .all('/mcp/', mcp, { parse: 'none' })
    .onError(({ code, error, request }) => {
      if (code === 'NOT_FOUND') return Response.json({ status: 404, detail: 'No such route; the MCP endpoint is /mcp/' }, { status: 404 });
      const envelope = errorEnvelope(error, accessRecord(request)?.id ?? newId());
      return Response.json(envelope, { status: envelope.status_code });
    });
}
