/** OAuth subjects linked to workspaces (`bun run admin oauth:link`), for tokens without a workspace_id claim. */
export interface OAuthIdentityRepo {
  link(input: { issuer: string; subject: string; workspaceId: string }): Promise<void>;
  workspaceFor(issuer: string, subject: string): Promise<string | undefined>;
}

/** A client of the built-in authorization server, registered (RFC 7591) or read from its metadata document. */
export interface OAuthClientRecord {
  clientId: string;
  /** SHA-256 of the client secret; null for public clients (`none`). */
  secretHash: string | null;
  clientName: string;
  redirectUris: string[];
  authMethod: 'none' | 'client_secret_post' | 'client_secret_basic';
  /** The registration as answered to the client (without the secret). */
  metadata: Record<string, unknown>;
  createdAt: number;
}

/** An authorization code (only its SHA-256 is stored), single use, short-lived. */
export interface OAuthCodeRecord {
  codeHash: string;
  clientId: string;
  clientName: string;
  userId: string;
  workspaceId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  expiresAt: number;
}

/** A person's consent to a client in one workspace: the family of its refresh tokens, listed and revoked in the console. */
export interface OAuthGrantRecord {
  id: string;
  clientId: string;
  clientName: string;
  userId: string;
  workspaceId: string;
  resource: string;
  scope: string;
  createdAt: number;
  lastUsedAt: number;
  revokedAt: number | null;
}

export interface OAuthSigningKeyRecord {
  kid: string;
  alg: string;
  privateJwk: Record<string, unknown>;
  publicJwk: Record<string, unknown>;
  createdAt: number;
  retiredAt: number | null;
}

/** What redeeming a code or a refresh token found: `spent` means it had been used before (a replay). */
export type OAuthRedeemed<T> = { state: 'ok'; value: T } | { state: 'spent'; grantId: string | null } | { state: 'invalid' };

/** The authorization server's records (migration 016). */
export interface OAuthRepo {
  /** False when the id is taken. */
  createClient(client: OAuthClientRecord): Promise<boolean>;
  getClient(clientId: string): Promise<OAuthClientRecord | undefined>;
  saveCode(code: OAuthCodeRecord): Promise<void>;
  /** A code as stored (used or not), to check its client, redirect URI and PKCE before spending it. */
  findCode(codeHash: string): Promise<(OAuthCodeRecord & { usedAt: number | null }) | undefined>;
  /** Marks a live code used, in one statement (two exchanges of one code: one wins). */
  redeemCode(codeHash: string, now: number): Promise<OAuthRedeemed<OAuthCodeRecord>>;
  /**
   * Records a second use of a code and answers the grant its first use made, if made yet; a grant
   * made after this (a race) is created revoked.
   */
  markCodeReplayed(codeHash: string, now: number): Promise<string | null>;
  /** The grant a code became, with its first refresh token, in one transaction. */
  createGrant(grant: OAuthGrantRecord, refresh: { hash: string; expiresAt: number }, codeHash: string): Promise<void>;
  /**
   * Marks a live refresh token of this client used and stores its successor, in one transaction;
   * its grant must be live (not revoked, its person still a member).
   */
  rotateRefresh(
    hash: string,
    clientId: string,
    next: { hash: string; expiresAt: number },
    now: number,
  ): Promise<OAuthRedeemed<OAuthGrantRecord>>;
  /** The grant a refresh token belongs to (any state), for revocation (RFC 7009). */
  grantOfRefresh(hash: string): Promise<OAuthGrantRecord | undefined>;
  getGrant(id: string): Promise<OAuthGrantRecord | undefined>;
  /** Whether a grant is live: not revoked, and its person still a member of its workspace. */
  grantIsLive(id: string): Promise<boolean>;
  /** Revokes a grant (and so every token of it); false when it was not live. */
  revokeGrant(id: string, now: number): Promise<boolean>;
  /** A person's live grants in a workspace, newest first. */
  grantsOf(userId: string, workspaceId: string): Promise<OAuthGrantRecord[]>;
  signingKeys(): Promise<OAuthSigningKeyRecord[]>;
  /** Adds a key and retires every other live one at `now`, in one transaction. */
  addSigningKey(key: OAuthSigningKeyRecord, now: number): Promise<void>;
  /** Deletes keys retired before one time, codes and refresh tokens expired before another. */
  prune(input: { keysRetiredBefore: number; expiredBefore: number }): Promise<void>;
}
