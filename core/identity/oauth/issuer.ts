import type { Config } from '../../config.ts';
import { MCP_SCOPES } from './resource-urls.ts';

/**
 * The built-in authorization server's identifier (docs/oauth.md): PUBLIC_URL, else the
 * REST host's own address. A wildcard listen address names no host a browser can reach, so it
 * reads as localhost there.
 */
export function issuerUrl(config: Config, restPort: number): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/+$/, '');
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${restPort}`;
}

export const OAUTH_PATHS = {
  metadata: '/.well-known/oauth-authorization-server',
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
  jwks: '/oauth/jwks.json',
} as const;

/** RFC 8414 authorization server metadata. */
export function authorizationServerMetadata(issuer: string, docsPath: string) {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at(OAUTH_PATHS.authorize),
    token_endpoint: at(OAUTH_PATHS.token),
    registration_endpoint: at(OAUTH_PATHS.register),
    revocation_endpoint: at(OAUTH_PATHS.revoke),
    jwks_uri: at(OAUTH_PATHS.jwks),
    scopes_supported: MCP_SCOPES,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: at(docsPath),
  };
}
