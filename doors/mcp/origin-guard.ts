import type { Config } from '../../core/config.ts';
import type { McpUrls } from '../../core/identity/oauth/resource-urls.ts';

/**
 * DNS-rebinding protection of the MCP endpoint (MCP 2025-11-25, streamable HTTP: servers MUST
 * validate Origin). A web page can make a browser send requests to this host under a name the
 * attacker controls; the browser then says where the page came from (Origin) and which name it
 * resolved (Host). So a request whose Origin is neither this host's own nor one the operator
 * allowed (MCP_ALLOWED_ORIGINS) is refused, and, while the host listens on loopback only, so is
 * one whose Host is not one of its own names. Requests without Origin (every non-browser client)
 * pass the Origin check.
 */
export interface OriginGuard {
  /** The 403 answer for a request this host must not serve, else undefined. */
  refusal(request: Request): Response | undefined;
  /** Whether CORS headers go on the answer: a browser page from an allowed other origin. */
  crossOrigin(request: Request): string | undefined;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** An origin as browsers send it (`http://host:port`, default port dropped, host lowercased); undefined when it is none. */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** A Host header as `host[:port]`, lowercased, port 80 dropped. */
function hostOf(value: string): string | undefined {
  try {
    return new URL(`http://${value}`).host;
  } catch {
    return undefined;
  }
}

/** Up to 100 characters of what the caller sent, for a message that names it. */
const shown = (value: string) => (value.length > 100 ? `${value.slice(0, 100)}…` : value);

function forbidden(message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }, { status: 403 });
}

export function originGuard(config: Config, urls: McpUrls): OriginGuard {
  const listening = new URL(urls.mcpUrl);
  const resource = new URL(urls.resource);
  const loopback = isLoopback(config.host);
  const port = listening.port;
  // On loopback every loopback name of the port is this host's own (no one else can serve that port).
  const ownHosts = new Set([listening.host, resource.host, ...(loopback ? LOOPBACK_NAMES.map((n) => hostOf(`${n}:${port}`)) : [])]);
  const ownOrigins = new Set([
    listening.origin,
    resource.origin,
    ...(loopback ? LOOPBACK_NAMES.map((n) => `http://${hostOf(`${n}:${port}`)}`) : []),
  ]);
  const anyOrigin = config.mcpAllowedOrigins.includes('*');
  const allowed = new Set(config.mcpAllowedOrigins.map((o) => originOf(o) ?? o.toLowerCase()));
  const own = [...ownOrigins].join(', ');

  return {
    refusal(request) {
      const host = request.headers.get('host');
      if (loopback && host !== null && !ownHosts.has(hostOf(host))) {
        return forbidden(
          `Host "${shown(host)}" is not a name of this MCP server, which listens on loopback (${[...ownHosts].join(', ')}). ` +
            'Behind a proxy that passes its own Host, set MCP_RESOURCE_URL to the public MCP URL.',
        );
      }
      const origin = request.headers.get('origin');
      if (origin === null || anyOrigin) return undefined;
      const normalized = originOf(origin);
      if (normalized && (ownOrigins.has(normalized) || allowed.has(normalized))) return undefined;
      return forbidden(
        `Origin "${shown(origin)}" may not call this MCP server (its own: ${own}). ` +
          'To let browser pages from it connect, add it to MCP_ALLOWED_ORIGINS (comma-separated origins).',
      );
    },
    crossOrigin(request) {
      const origin = request.headers.get('origin');
      const normalized = origin === null ? undefined : originOf(origin);
      if (!origin || !normalized || ownOrigins.has(normalized)) return undefined;
      return anyOrigin || allowed.has(normalized) ? origin : undefined;
    },
  };
}

/** What a browser may send and read across origins on the MCP endpoint. */
export function corsHeaders(origin: string, preflight: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate, x-request-id',
    vary: 'Origin',
  };
  if (preflight) {
    headers['access-control-allow-methods'] = 'GET, POST, DELETE, OPTIONS';
    headers['access-control-allow-headers'] =
      'authorization, service-api-key, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id, x-request-id';
    headers['access-control-max-age'] = '600';
  }
  return headers;
}
