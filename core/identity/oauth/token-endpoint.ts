import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { OAuthClientRecord, OAuthGrantRecord } from '../../ports/storage.ts';
import { authenticateClient, sha256 } from './clients.ts';
import { OAuthError } from './oauth-error.ts';
import type { OAuthServer, Signer } from './oauth-server.ts';

/** Refresh tokens live 30 days from their issue; each use gives a new one. */
const REFRESH_MS = 30 * 24 * 3600_000;

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA-256(verifier)) equals the challenge. */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

function newRefresh() {
  const token = `wfr_${randomBytes(32).toString('base64url')}`;
  return { token, hash: sha256(token), expiresAt: Date.now() + REFRESH_MS };
}

async function answer(server: OAuthServer, grant: OAuthGrantRecord, resource: string, refreshToken: string, signer: Signer) {
  return {
    access_token: await server.accessToken(grant, resource, signer),
    token_type: 'Bearer',
    expires_in: server.accessTokenSeconds,
    refresh_token: refreshToken,
    scope: grant.scope,
  };
}

/** A `resource` of a token request, when sent, must be the MCP resource (RFC 8707 §2.2). */
function resourceOf(server: OAuthServer, form: URLSearchParams, granted: string): string {
  const asked = form.getAll('resource');
  if (asked.length === 0) return granted;
  if (asked.length > 1 || !server.isResource(asked[0] as string)) {
    throw new OAuthError('invalid_target', `resource must be this service's MCP endpoint, ${server.resource}`);
  }
  return asked[0] as string;
}

async function authorizationCode(server: OAuthServer, client: OAuthClientRecord, form: URLSearchParams) {
  const code = form.get('code');
  const verifier = form.get('code_verifier');
  if (!code) throw new OAuthError('invalid_request', 'code is missing');
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is missing (PKCE is required)');
  if (!VERIFIER.test(verifier))
    throw new OAuthError('invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  const now = Date.now();
  const hash = sha256(code);
  const replayed = async () => {
    // A code used twice was stolen or replayed: what it became is revoked too (OAuth 2.1 §4.1.3).
    const grantId = await server.repo.markCodeReplayed(hash, now);
    if (grantId) await server.revokeGrant(grantId);
    return new OAuthError('invalid_grant', 'This authorization code was already used; the tokens issued for it are revoked');
  };
  const stored = await server.repo.findCode(hash);
  if (!stored) throw new OAuthError('invalid_grant', 'Unknown authorization code');
  if (stored.usedAt !== null) throw await replayed();
  if (stored.expiresAt <= now) throw new OAuthError('invalid_grant', 'This authorization code expired (codes last 60 s)');
  // Checked before the code is spent: someone holding a leaked code without its verifier cannot burn it.
  if (stored.clientId !== client.clientId) throw new OAuthError('invalid_grant', 'This code was issued to another client');
  if (form.get('redirect_uri') !== stored.redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri must be the one sent to the authorization endpoint');
  }
  if (!pkceMatches(verifier, stored.codeChallenge))
    throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
  const resource = resourceOf(server, form, stored.resource);
  const signer = await server.keys.current();
  const redeemed = await server.repo.redeemCode(hash, now);
  if (redeemed.state === 'spent') throw await replayed();
  if (redeemed.state === 'invalid') throw new OAuthError('invalid_grant', 'This authorization code expired (codes last 60 s)');
  const found = redeemed.value;
  const refresh = newRefresh();
  const grant: OAuthGrantRecord = {
    id: randomUUID(),
    clientId: client.clientId,
    clientName: found.clientName,
    userId: found.userId,
    workspaceId: found.workspaceId,
    resource: found.resource,
    scope: found.scope,
    createdAt: now,
    lastUsedAt: now,
    revokedAt: null,
  };
  await server.repo.createGrant(grant, refresh, found.codeHash);
  return answer(server, grant, resource, refresh.token, signer);
}

async function refreshToken(server: OAuthServer, client: OAuthClientRecord, form: URLSearchParams) {
  const presented = form.get('refresh_token');
  if (!presented) throw new OAuthError('invalid_request', 'refresh_token is missing');
  const next = newRefresh();
  // The key is read before the old token is spent: a failure then leaves the client its token.
  const signer = await server.keys.current();
  const rotated = await server.repo.rotateRefresh(sha256(presented), client.clientId, next, Date.now());
  if (rotated.state === 'spent') {
    // Refresh tokens are single use: a second use means two holders, so the whole grant goes.
    if (rotated.grantId) await server.revokeGrant(rotated.grantId);
    throw new OAuthError('invalid_grant', 'This refresh token was already used; the connection is revoked: sign in again');
  }
  if (rotated.state === 'invalid') {
    throw new OAuthError('invalid_grant', 'Unknown, expired or revoked refresh token: sign in again');
  }
  const grant = rotated.value;
  return answer(server, grant, resourceOf(server, form, grant.resource), next.token, signer);
}

/**
 * POST /oauth/token (RFC 6749 §3.2, OAuth 2.1): the authorization_code grant with PKCE S256, and
 * refresh_token with rotation and reuse detection. Throws OAuthError (answered as JSON).
 */
export async function tokenRequest(server: OAuthServer, form: URLSearchParams, authorization: string | null) {
  const grantType = form.get('grant_type');
  if (!grantType) throw new OAuthError('invalid_request', 'grant_type is missing');
  for (const name of ['grant_type', 'code', 'code_verifier', 'redirect_uri', 'refresh_token', 'client_id']) {
    if (form.getAll(name).length > 1) throw new OAuthError('invalid_request', `${name} is sent more than once`);
  }
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }
  const client = await authenticateClient(server.repo, form, authorization);
  const tokens =
    grantType === 'authorization_code' ? await authorizationCode(server, client, form) : await refreshToken(server, client, form);
  // Housekeeping after the answer is ready; its failure must not cost the client its new tokens.
  void server.prune().catch(() => undefined);
  return tokens;
}

/**
 * POST /oauth/revoke (RFC 7009): a refresh or access token of this client revokes its whole
 * grant. Unknown tokens are answered like known ones (200), so the endpoint tells nothing.
 */
export async function revokeRequest(server: OAuthServer, form: URLSearchParams, authorization: string | null): Promise<void> {
  const token = form.get('token');
  if (!token) throw new OAuthError('invalid_request', 'token is missing');
  const client = await authenticateClient(server.repo, form, authorization);
  let grantId: string | undefined;
  if (server.issued(token)) {
    try {
      const payload = await server.verify(token);
      if (payload.client_id === client.clientId && typeof payload.grant_id === 'string') grantId = payload.grant_id;
    } catch {
      return; // expired or already revoked: nothing left to do
    }
  } else {
    const grant = await server.repo.grantOfRefresh(sha256(token));
    if (grant && grant.clientId === client.clientId) grantId = grant.id;
  }
  if (grantId) await server.revokeGrant(grantId);
}
