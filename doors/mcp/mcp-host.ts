import type { Kernel } from '../../core/kernel.ts';
import { stopGracefully } from '../http/stop-gracefully.ts';
import { log } from '../../core/log.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { createJwtVerifier } from './jwt-verifier.ts';
import { type McpHostContext, mcpApp } from './mcp-app.ts';
import { originGuard } from './origin-guard.ts';
import { acceptedAudiences, mcpUrls } from '../../core/identity/oauth/resource-urls.ts';
import { buildTools } from './tool-table.ts';
import { IDLE_TIMEOUT_S } from '../http/stop-gracefully.ts';
import { modernMcp } from './mcp-modern.ts';

export interface RunningMcpHost {
  /** Where this process serves MCP, e.g. http://127.0.0.1:3001/mcp. */
  url: string;
  /** The canonical resource (MCP_RESOURCE_URL, else `url`), the audience of access tokens. */
  resource: string;
  stop(): Promise<void>;
}

/** Starts the MCP host on HOST:MCP_PORT; tools are generated from `ops` once, before listening. */
export function startMcpHost(kernel: Kernel, ops: AnyOperation[]): RunningMcpHost {
  const { config } = kernel;
  const tools = buildTools(ops, kernel.plugins);
  let context: McpHostContext | undefined;
  const app = mcpApp(kernel, () => {
    if (!context) throw new Error('the MCP host is still starting');
    return context;
  });
  // Bun's cap sits above the transport's own, which answers a readable 413 first.
  // idleTimeout above the longest wait a tool call may ask for (wait_seconds ≤ 50): Bun's default of 10 s would cut it.
  app.listen({
    hostname: config.host,
    port: config.mcpPort,
    maxRequestBodySize: config.maxBodyBytes * 2 + 65_536,
    idleTimeout: IDLE_TIMEOUT_S,
  });
  const urls = mcpUrls(config, app.server?.port ?? config.mcpPort);
  const verifyJwt = config.oauthIssuer
    ? createJwtVerifier({
        issuer: config.oauthIssuer,
        jwksUrl: config.oauthJwksUrl ?? `${config.oauthIssuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
        audiences: acceptedAudiences(urls),
      })
    : undefined;
  const byName = new Map(tools.map((t) => [t.op.name, t]));
  context = {
    kernel,
    urls,
    tools,
    byName,
    modern: modernMcp(kernel, tools, byName),
    auth: { kernel, resource: urls.resource, verifyJwt },
    guard: originGuard(config, urls),
  };
  log.info('MCP server listening', {
    url: urls.mcpUrl,
    resource: urls.resource,
    tools: tools.length,
    oauth_issuer: config.oauthIssuer ?? null,
    allowed_origins: config.mcpAllowedOrigins,
  });
  const listener = app.server ?? undefined;
  return {
    url: urls.mcpUrl,
    resource: urls.resource,
    stop: async () => void (await stopGracefully(listener, config.shutdownGraceMs, 'mcp')),
  };
}
