import { randomBytes } from 'node:crypto';
import { MCP_SCOPES } from './resource-urls.ts';
import type { OAuthClientRecord } from '../../ports/storage.ts';
import { findClient, sha256 } from './clients.ts';
import { OAuthError } from './oauth-error.ts';
import type { OAuthServer } from './oauth-server.ts';
import { redirectMatches } from './redirect-uris.ts';

/** Codes are exchanged within a minute or never (OAuth 2.1 recommends a short life). */
const CODE_MS = 60_000;
const CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;
const PARAMS = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'resource', 'scope'];

/** An authorization request that passed every check: what the consent page shows and the code carries. */
export interface AuthorizeRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
  scope: string;
  /** The request's own parameters, carried by the consent form to its POST. */
  params: Record<string, string>;
}

export type AuthorizeCheck =
  /** The client or its redirect URI is not known good: shown to the person, never redirected to. */
  | { kind: 'page'; message: string }
  /** Any other fault goes back to the client's redirect URI (RFC 6749 §4.1.2.1). */
  | { kind: 'redirect'; location: string }
  | { kind: 'ok'; request: AuthorizeRequest };

/** The client's redirect URI with these query parameters added, and `iss` (RFC 9207) so the client knows who answered. */
export function redirectTo(redirectUri: string, values: Record<string, string | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries({ ...values, iss: issuer })) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** Checks an authorization request (GET query or the consent form's POST), in the order RFC 6749 §4.1.2.1 asks. */
export async function checkAuthorize(server: OAuthServer, params: URLSearchParams): Promise<AuthorizeCheck> {
  let client: OAuthClientRecord;
  try {
    client = await findClient(server.repo, params.get('client_id'));
  } catch (e) {
    if (e instanceof OAuthError) return { kind: 'page', message: `This application cannot sign in here: ${e.description}.` };
    throw e;
  }
  // Required even with one registered URI: the token request must then repeat it (OAuth 2.1 §4.1.3).
  const presented = params.get('redirect_uri');
  if (!presented) return { kind: 'page', message: `${client.clientName} sent no redirect_uri.` };
  if (params.getAll('redirect_uri').length > 1 || !redirectMatches(client.redirectUris, presented)) {
    return {
      kind: 'page',
      message: `${client.clientName} asked to return to an address it did not register (${presented.slice(0, 200)}). Nothing was sent there.`,
    };
  }
  const state = params.get('state') ?? undefined;
  const fail = (error: string, description: string): AuthorizeCheck => ({
    kind: 'redirect',
    location: redirectTo(presented, { error, error_description: description, state }, server.issuer),
  });
  const repeated = PARAMS.find((name) => params.getAll(name).length > 1);
  if (repeated) return fail('invalid_request', `${repeated} is sent more than once`);
  if (params.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  const challenge = params.get('code_challenge');
  const method = params.get('code_challenge_method');
  if (!challenge) return fail('invalid_request', 'code_challenge is missing: PKCE with S256 is required');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)');
  if (!CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be 43 to 128 base64url characters');
  const resource = params.get('resource');
  if (!resource) return fail('invalid_target', `resource is missing: name the MCP endpoint, ${server.resource}`);
  if (!server.isResource(resource)) return fail('invalid_target', `resource must be this service's MCP endpoint, ${server.resource}`);
  const values = Object.fromEntries(PARAMS.map((n) => [n, params.get(n)]).filter(([, v]) => v !== null)) as Record<string, string>;
  // One scope exists; a request for others (openid, profile…) is granted that one, as RFC 6749 §3.3 allows.
  const scope = MCP_SCOPES.join(' ');
  return {
    kind: 'ok',
    request: { client, redirectUri: presented, state, codeChallenge: challenge, resource, scope, params: values },
  };
}

/** Allow: a single-use code (stored as its SHA-256) for this person in this workspace, sent to the client. */
export async function allow(server: OAuthServer, request: AuthorizeRequest, userId: string, workspaceId: string): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await server.repo.saveCode({
    codeHash: sha256(code),
    clientId: request.client.clientId,
    clientName: request.client.clientName,
    userId,
    workspaceId,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    resource: request.resource,
    scope: request.scope,
    expiresAt: Date.now() + CODE_MS,
  });
  return redirectTo(request.redirectUri, { code, state: request.state }, server.issuer);
}

/** Deny: access_denied to the client, nothing issued. */
export const deny = (server: OAuthServer, request: AuthorizeRequest) =>
  redirectTo(
    request.redirectUri,
    { error: 'access_denied', error_description: 'The person declined', state: request.state },
    server.issuer,
  );
