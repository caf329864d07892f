import type { Kysely, Selectable, Transaction } from 'kysely';
import type {
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  OAuthRedeemed,
  OAuthRepo,
  OAuthSigningKeyRecord,
} from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import type { OAuthCodeTable, OAuthGrantTable, Tables } from './tables.ts';

const toGrant = (r: Selectable<OAuthGrantTable>): OAuthGrantRecord => ({
  id: r.id,
  clientId: r.client_id,
  clientName: r.client_name,
  userId: r.user_id,
  workspaceId: r.workspace_id,
  resource: r.resource,
  scope: r.scope,
  createdAt: Number(r.created_at),
  lastUsedAt: Number(r.last_used_at),
  revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
});

const toCode = (r: Selectable<OAuthCodeTable>): OAuthCodeRecord => ({
  codeHash: r.code_hash,
  clientId: r.client_id,
  clientName: r.client_name,
  userId: r.user_id,
  workspaceId: r.workspace_id,
  redirectUri: r.redirect_uri,
  codeChallenge: r.code_challenge,
  resource: r.resource,
  scope: r.scope,
  expiresAt: Number(r.expires_at),
});

/** A grant whose person is still a member of its workspace and that nobody revoked. */
function liveGrants(db: Kysely<Tables> | Transaction<Tables>) {
  return db
    .selectFrom('oauth_grants as g')
    .innerJoin('memberships as m', (j) => j.onRef('m.user_id', '=', 'g.user_id').onRef('m.workspace_id', '=', 'g.workspace_id'))
    .selectAll('g')
    .where('g.revoked_at', 'is', null);
}

/** The authorization server's records (migration 016). */
export class SqlOAuthRepo implements OAuthRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async createClient(c: OAuthClientRecord): Promise<boolean> {
    try {
      await this.db
        .insertInto('oauth_clients')
        .values({
          client_id: c.clientId,
          secret_hash: c.secretHash,
          client_name: c.clientName,
          redirect_uris: JSON.stringify(c.redirectUris),
          auth_method: c.authMethod,
          metadata: JSON.stringify(c.metadata),
          created_at: c.createdAt,
        })
        .execute();
      return true;
    } catch (e) {
      if (this.database.dialect.errors.isDuplicateKey(e)) return false;
      throw e;
    }
  }

  async getClient(clientId: string): Promise<OAuthClientRecord | undefined> {
    const r = await this.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
    return (
      r && {
        clientId: r.client_id,
        secretHash: r.secret_hash,
        clientName: r.client_name,
        redirectUris: JSON.parse(r.redirect_uris),
        authMethod: r.auth_method as OAuthClientRecord['authMethod'],
        metadata: JSON.parse(r.metadata),
        createdAt: Number(r.created_at),
      }
    );
  }

  async saveCode(c: OAuthCodeRecord): Promise<void> {
    await this.db
      .insertInto('oauth_codes')
      .values({
        code_hash: c.codeHash,
        client_id: c.clientId,
        client_name: c.clientName,
        user_id: c.userId,
        workspace_id: c.workspaceId,
        redirect_uri: c.redirectUri,
        code_challenge: c.codeChallenge,
        resource: c.resource,
        scope: c.scope,
        expires_at: c.expiresAt,
      })
      .execute();
  }

  async findCode(codeHash: string): Promise<(OAuthCodeRecord & { usedAt: number | null }) | undefined> {
    const r = await this.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return r && { ...toCode(r), usedAt: r.used_at === null ? null : Number(r.used_at) };
  }

  async markCodeReplayed(codeHash: string, now: number): Promise<string | null> {
    await this.db.updateTable('oauth_codes').set({ replayed_at: now }).where('code_hash', '=', codeHash).execute();
    const r = await this.db.selectFrom('oauth_codes').select('grant_id').where('code_hash', '=', codeHash).executeTakeFirst();
    return r?.grant_id ?? null;
  }

  async redeemCode(codeHash: string, now: number): Promise<OAuthRedeemed<OAuthCodeRecord>> {
    const marked = await this.db
      .updateTable('oauth_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    const r = await this.db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    if (!r) return { state: 'invalid' };
    if (Number(marked.numUpdatedRows) === 0) return r.used_at === null ? { state: 'invalid' } : { state: 'spent', grantId: r.grant_id };
    return { state: 'ok', value: toCode(r) };
  }

  async createGrant(g: OAuthGrantRecord, refresh: { hash: string; expiresAt: number }, codeHash: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('oauth_grants')
        .values({
          id: g.id,
          client_id: g.clientId,
          client_name: g.clientName,
          user_id: g.userId,
          workspace_id: g.workspaceId,
          resource: g.resource,
          scope: g.scope,
          created_at: g.createdAt,
          last_used_at: g.lastUsedAt,
        })
        .execute();
      await trx
        .insertInto('oauth_refresh_tokens')
        .values({ token_hash: refresh.hash, grant_id: g.id, created_at: g.createdAt, expires_at: refresh.expiresAt })
        .execute();
      // A replayed code revokes what it became (OAuth 2.1 §4.1.3), also when the replay came first.
      await trx.updateTable('oauth_codes').set({ grant_id: g.id }).where('code_hash', '=', codeHash).execute();
      const code = await trx.selectFrom('oauth_codes').select('replayed_at').where('code_hash', '=', codeHash).executeTakeFirst();
      if (code?.replayed_at != null)
        await trx.updateTable('oauth_grants').set({ revoked_at: g.createdAt }).where('id', '=', g.id).execute();
    });
  }

  async rotateRefresh(
    hash: string,
    clientId: string,
    next: { hash: string; expiresAt: number },
    now: number,
  ): Promise<OAuthRedeemed<OAuthGrantRecord>> {
    return this.db.transaction().execute(async (trx) => {
      const token = await trx.selectFrom('oauth_refresh_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
      if (!token || Number(token.expires_at) <= now) return { state: 'invalid' } as const;
      const grant = await liveGrants(trx).where('g.id', '=', token.grant_id).executeTakeFirst();
      // Another client's token is not this client's to spend: refused, and left as it was.
      if (!grant || grant.client_id !== clientId) return { state: 'invalid' } as const;
      const marked = await trx
        .updateTable('oauth_refresh_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(marked.numUpdatedRows) === 0) return { state: 'spent', grantId: token.grant_id } as const;
      await trx
        .insertInto('oauth_refresh_tokens')
        .values({ token_hash: next.hash, grant_id: grant.id, created_at: now, expires_at: next.expiresAt })
        .execute();
      await trx.updateTable('oauth_grants').set({ last_used_at: now }).where('id', '=', grant.id).execute();
      return { state: 'ok', value: { ...toGrant(grant), lastUsedAt: now } } as const;
    });
  }

  async grantOfRefresh(hash: string): Promise<OAuthGrantRecord | undefined> {
    const r = await this.db
      .selectFrom('oauth_refresh_tokens as t')
      .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
      .selectAll('g')
      .where('t.token_hash', '=', hash)
      .executeTakeFirst();
    return r && toGrant(r);
  }

  async getGrant(id: string): Promise<OAuthGrantRecord | undefined> {
    const r = await this.db.selectFrom('oauth_grants').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toGrant(r);
  }

  async grantIsLive(id: string): Promise<boolean> {
    return (await liveGrants(this.db).where('g.id', '=', id).executeTakeFirst()) !== undefined;
  }

  async revokeGrant(id: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('oauth_grants')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async grantsOf(userId: string, workspaceId: string): Promise<OAuthGrantRecord[]> {
    const rows = await liveGrants(this.db)
      .where('g.user_id', '=', userId)
      .where('g.workspace_id', '=', workspaceId)
      .orderBy('g.created_at', 'desc')
      .orderBy('g.id')
      .execute();
    return rows.map(toGrant);
  }

  async signingKeys(): Promise<OAuthSigningKeyRecord[]> {
    const rows = await this.db.selectFrom('oauth_signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute();
    return rows.map((r) => ({
      kid: r.kid,
      alg: r.alg,
      privateJwk: JSON.parse(r.private_jwk),
      publicJwk: JSON.parse(r.public_jwk),
      createdAt: Number(r.created_at),
      retiredAt: r.retired_at === null ? null : Number(r.retired_at),
    }));
  }

  async addSigningKey(k: OAuthSigningKeyRecord, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('oauth_signing_keys').set({ retired_at: now }).where('retired_at', 'is', null).execute();
      await trx
        .insertInto('oauth_signing_keys')
        .values({
          kid: k.kid,
          alg: k.alg,
          private_jwk: JSON.stringify(k.privateJwk),
          public_jwk: JSON.stringify(k.publicJwk),
          created_at: k.createdAt,
        })
        .execute();
    });
  }

  async prune(input: { keysRetiredBefore: number; expiredBefore: number }): Promise<void> {
    await this.db.deleteFrom('oauth_signing_keys').where('retired_at', '<', input.keysRetiredBefore).execute();
    await this.db.deleteFrom('oauth_codes').where('expires_at', '<', input.expiredBefore).execute();
    await this.db.deleteFrom('oauth_refresh_tokens').where('expires_at', '<', input.expiredBefore).execute();
  }
}
