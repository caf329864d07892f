import { randomUUID } from 'node:crypto';
import { type JWTPayload, SignJWT, decodeJwt, errors, jwtVerify } from 'jose';
import { ServiceError } from '../../errors.ts';
import type { OAuthGrantRecord, OAuthRepo } from '../../ports/storage.ts';
import { SIGNING_ALG, SigningKeys } from './signing-keys.ts';

export const ACCESS_TOKEN_SECONDS = 3600;
/** How long a process trusts that a grant is live before asking the database again. */
const GRANT_CHECK_MS = 15_000;
/** Expired codes and refresh tokens (kept a day, for replay detection) and spent keys are deleted hourly. */
const PRUNE_EVERY_MS = 3600_000;

/** The key a token is signed with (read before anything is spent: see token-endpoint.ts). */
export type Signer = Awaited<ReturnType<SigningKeys['current']>>;

/** Where the server lives: known once the listeners have their ports (PORT=0 in tests). */
export interface OAuthAddresses {
  /** The issuer: PUBLIC_URL or the REST host's address. */
  issuer: string;
  /** The MCP resource, canonical (no trailing slash). */
  resource: string;
}

/**
 * The built-in authorization server's state in one process (docs/oauth.md): its
 * addresses, its signing keys, and which grants are live. The REST host issues tokens with it; the
 * MCP host verifies them with it against the stored keys, with no HTTP round trip and no cooldown.
 */
export class OAuthServer {
  readonly keys: SigningKeys;
  private addresses: OAuthAddresses | undefined;
  private readonly liveGrants = new Map<string, { live: boolean; until: number }>();
  private prunedAt = 0;

  constructor(
    readonly repo: OAuthRepo,
    /** Access-token lifetime in seconds (OAUTH_ACCESS_TOKEN_SECONDS; an hour by default). */
    readonly accessTokenSeconds = ACCESS_TOKEN_SECONDS,
  ) {
    this.keys = new SigningKeys(repo, accessTokenSeconds);
  }

  bind(addresses: OAuthAddresses): void {
    this.addresses = { issuer: addresses.issuer, resource: addresses.resource.replace(/\/+$/, '') };
  }

  get issuer(): string {
    if (!this.addresses) throw new ServiceError('unavailable', 'The service is still starting; retry in a moment');
    return this.addresses.issuer;
  }

  get resource(): string {
    if (!this.addresses) throw new ServiceError('unavailable', 'The service is still starting; retry in a moment');
    return this.addresses.resource;
  }

  /** The MCP endpoint answers at /mcp and /mcp/: either names it as a `resource` and an audience. */
  isResource(value: string): boolean {
    return value.replace(/\/+$/, '') === this.resource;
  }

  /** A JWT access token for a grant (RFC 9068 shape): `aud` the resource asked for, `sub` the person, `workspace_id`. */
  async accessToken(grant: OAuthGrantRecord, resource: string, signer?: Signer): Promise<string> {
    const { kid, alg, key } = signer ?? (await this.keys.current());
    return new SignJWT({ workspace_id: grant.workspaceId, client_id: grant.clientId, scope: grant.scope, grant_id: grant.id })
      .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(grant.userId)
      .setAudience(resource)
      .setIssuedAt()
      .setExpirationTime(`${this.accessTokenSeconds}s`)
      .setJti(randomUUID())
      .sign(key);
  }

  /** Whether a bearer JWT claims to come from this server (read unverified, to choose how to verify it). */
  issued(token: string): boolean {
    try {
      return this.addresses !== undefined && decodeJwt(token).iss === this.addresses.issuer;
    } catch {
      return false;
    }
  }

  /**
   * Verifies an access token of this server: signature by one of its keys, issuer, audience (the
   * MCP resource, with or without its slash), expiry, and that its grant is still live.
   */
  async verify(token: string): Promise<JWTPayload> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          const key = await this.keys.verifying(header.kid);
          if (!key) throw new errors.JWKSNoMatchingKey();
          return key;
        },
        {
          issuer: this.issuer,
          audience: [this.resource, `${this.resource}/`],
          requiredClaims: ['exp', 'sub'],
          typ: 'at+jwt',
          algorithms: [SIGNING_ALG],
        },
      ));
    } catch (e) {
      if (e instanceof errors.JOSEError) {
        throw new ServiceError('unauthorized', { message: `Invalid access token: ${e.message}`, reason: e.code });
      }
      throw e;
    }
    const grantId = typeof payload.grant_id === 'string' ? payload.grant_id : '';
    if (!(await this.grantIsLive(grantId))) {
      throw new ServiceError('unauthorized', {
        message: 'The access token was revoked (the connection was removed, or its person left the workspace); sign in again',
        reason: 'revoked',
      });
    }
    return payload;
  }

  /** Live grants are cached for 15 s per process: a revocation reaches every process within that time. */
  async grantIsLive(id: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.liveGrants.get(id);
    if (cached && cached.until > now) return cached.live;
    const live = id !== '' && (await this.repo.grantIsLive(id));
    if (this.liveGrants.size > 10_000) this.liveGrants.clear();
    this.liveGrants.set(id, { live, until: now + GRANT_CHECK_MS });
    return live;
  }

  /** Deletes what has expired, at most hourly per process (called as tokens are issued). */
  async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    await this.repo.prune({ keysRetiredBefore: now - this.keys.overlapMs, expiredBefore: now - 24 * 3600_000 });
  }

  /** Revokes a grant: this process stops its tokens at once, the others within GRANT_CHECK_MS. */
  async revokeGrant(id: string): Promise<boolean> {
    const revoked = await this.repo.revokeGrant(id, Date.now());
    this.liveGrants.set(id, { live: false, until: Date.now() + GRANT_CHECK_MS });
    return revoked;
  }
}
