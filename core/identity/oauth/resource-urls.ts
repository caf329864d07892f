import type { Config } from '../../config.ts';

/** Scopes advertised in the metadata: the one scope clients should request for this server. */
export const MCP_SCOPES = ['workflow'];

/** The addresses the MCP host publishes about itself (RFC 9728). */
export interface McpUrls {
  /** Where this process listens: http://HOST:PORT/mcp (also answered with a trailing slash). */
  mcpUrl: string;
  /**
   * The URL clients connect to and tokens are issued for (MCP_RESOURCE_URL behind a proxy, else
   * mcpUrl), canonical without a trailing slash: clients that connect to /mcp/ accept it as its
   * prefix, while a slash here would make clients that connect to /mcp refuse it.
   */
  resource: string;
  /** RFC 9728 path-specific metadata URL of `resource`, named in WWW-Authenticate. */
  metadataUrl: string;
}

export function mcpUrls(config: Config, port: number): McpUrls {
  const mcpUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}/mcp`;
  const resource = (config.mcpResourceUrl ?? mcpUrl).replace(/\/+$/, '');
  const url = new URL(resource);
  // RFC 9728 §3.1: the well-known segment goes between the host and the resource's path.
  const metadataUrl = `${url.origin}/.well-known/oauth-protected-resource${url.pathname.replace(/\/+$/, '')}`;
  return { mcpUrl, resource, metadataUrl };
}

/** RFC 9728 protected-resource metadata: the built-in issuer first, then OAUTH_ISSUER (tokens of both are accepted). */
export function protectedResourceMetadata(config: Config, urls: McpUrls, builtInIssuer: string) {
  const external = config.oauthIssuer && config.oauthIssuer !== builtInIssuer ? [config.oauthIssuer] : [];
  return {
    resource: urls.resource,
    authorization_servers: [builtInIssuer, ...external],
    bearer_methods_supported: ['header'],
    scopes_supported: MCP_SCOPES,
    resource_name: 'Workflow Service MCP',
  };
}

/** The token audiences accepted: the resource URL with and without its trailing slash. */
export function acceptedAudiences(urls: McpUrls): string[] {
  const bare = urls.resource.replace(/\/+$/, '');
  return [bare, `${bare}/`];
}
