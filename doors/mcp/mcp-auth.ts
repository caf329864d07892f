import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { JWTPayload } from 'jose';
import { ServiceError } from '../../core/errors.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Workspace } from '../../core/model.ts';
import { planRules } from '../../core/plans.ts';
import type { Caller } from '../../core/operations/run-operation.ts';
import { authenticateFor, hashApiKey, type KeyHolder, rateKeyOf } from '../../core/identity/api-keys.ts';
import { type JwtVerifier, looksLikeJwt } from './jwt-verifier.ts';

/**
 * Who is calling. Authentication failures never get this far (HTTP 401); an authenticated caller
 * that may not use the API (plan without access, OAuth subject linked to no workspace) still gets
 * an MCP session, and every tool call answers `denied` as a forbidden envelope, as the spec asks.
 */
export interface McpCaller extends Caller {
  method: 'api_key' | 'oauth';
}

export interface McpAuthContext {
  kernel: Kernel;
  /** OAUTH_ISSUER's tokens; absent when it is not set (the built-in issuer's are verified by kernel.oauth). */
  verifyJwt?: JwtVerifier;
  resource: string;
}

const unauthorized = (message: string) => new ServiceError('unauthorized', { message });

function allowed(workspace: Workspace, method: McpCaller['method'], rateKey: string): McpCaller {
  if (planRules(workspace.plan).apiAccess) return { method, rateKey, workspace };
  return {
    method,
    rateKey,
    denied: new ServiceError('forbidden', {
      message: `The workspace's plan "${workspace.plan}" has no API access; upgrade it (bun run admin plan:set --workspace ${workspace.id} --plan pro)`,
    }),
  };
}

/**
 * The service-api-key path: the REST authentication, with "no API access" deferred to tool calls.
 * `projectId` (the project a lone tools/call names) is read with the key, as REST reads its route's.
 */
async function viaApiKey(ctx: McpAuthContext, key: string, who?: KeyHolder, projectId?: string): Promise<McpCaller> {
  try {
    const found = await authenticateFor(ctx.kernel.storage.workspaces, key, projectId, who);
    const project = projectId === undefined ? undefined : { id: projectId, project: found.project ?? null };
    return { method: 'api_key', rateKey: found.rateKey, keyId: found.keyId, workspace: found.workspace, project };
  } catch (e) {
    if (e instanceof ServiceError && e.code === 'forbidden') return { method: 'api_key', rateKey: rateKeyOf(hashApiKey(key)), denied: e };
    throw e;
  }
}

/** The token's workspace: its `workspace_id` claim, else its subject as linked by `admin oauth:link`. */
async function viaJwt(ctx: McpAuthContext, payload: JWTPayload): Promise<McpCaller> {
  const { storage } = ctx.kernel;
  const claimed = typeof payload.workspace_id === 'string' ? payload.workspace_id : undefined;
  const issuer = String(payload.iss);
  const workspaceId = claimed ?? (payload.sub ? await storage.oauthIdentities.workspaceFor(issuer, payload.sub) : undefined);
  const rateKey = `oauth:${hashApiKey(`${issuer} ${payload.sub ?? ''}`).slice(0, 16)}`;
  if (!workspaceId) {
    return {
      method: 'oauth',
      rateKey,
      denied: new ServiceError('forbidden', {
        message: `The token's subject "${payload.sub ?? '(none)'}" is linked to no workspace; link it with: bun run admin oauth:link --workspace ID --subject ${payload.sub ?? 'SUB'}`,
      }),
    };
  }
  const workspace = await storage.workspaces.get(workspaceId);
  if (!workspace) throw unauthorized(`The token names workspace ${workspaceId}, which does not exist`);
  return allowed(workspace, 'oauth', rateKey);
}

function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.map(String);
  return [];
}

/**
 * Authenticates an MCP request and bridges it to the SDK's bearer AuthInfo: the service-api-key
 * header (or an API key sent as a bearer token, for clients that only know bearer), or an OAuth
 * JWT access token. Throws `unauthorized` (→ HTTP 401) when there is no usable credential.
 */
export async function authenticateMcp(ctx: McpAuthContext, request: Request, who?: KeyHolder, projectId?: string): Promise<AuthInfo> {
  const apiKey = request.headers.get('service-api-key')?.trim();
  const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1]?.trim();
  const resource = new URL(ctx.resource);
  if (apiKey || (bearer && !looksLikeJwt(bearer))) {
    const key = (apiKey || bearer) as string;
    return { token: key, clientId: 'service-api-key', scopes: [], resource, extra: { caller: await viaApiKey(ctx, key, who, projectId) } };
  }
  if (!bearer) {
    throw unauthorized(
      'Missing credentials: send the service-api-key header, or sign in through the browser (OAuth; clients find the authorization server in the resource metadata)',
    );
  }
  // The built-in issuer's tokens are checked against the stored keys here; OAUTH_ISSUER's by its JWKS.
  const builtIn = ctx.kernel.oauth.issued(bearer);
  if (!builtIn && !ctx.verifyJwt) {
    throw unauthorized(`This token was not issued by this service (${ctx.kernel.oauth.issuer}) and OAUTH_ISSUER is not set: sign in again`);
  }
  const payload = builtIn ? await ctx.kernel.oauth.verify(bearer) : await (ctx.verifyJwt as JwtVerifier)(bearer);
  const caller = await viaJwt(ctx, payload);
  if (who && caller.workspace) who.workspaceId = caller.workspace.id;
  const clientId = [payload.client_id, payload.azp, payload.sub].find((v): v is string => typeof v === 'string') ?? 'oauth';
  return { token: bearer, clientId, scopes: scopesOf(payload), expiresAt: payload.exp, resource, extra: { caller } };
}

/** The caller stored in an AuthInfo by authenticateMcp (a denied one when there is none). */
export function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  return caller ?? { method: 'api_key', rateKey: 'anonymous', denied: unauthorized('Missing credentials') };
}
