import type { OAuthIdentityRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';

/** (issuer, subject) → workspace, for OAuth tokens that carry no workspace_id claim. */
export class SqlOAuthIdentityRepo implements OAuthIdentityRepo {
  constructor(private readonly database: Database) {}

  async link(input: { issuer: string; subject: string; workspaceId: string }): Promise<void> {
    // Re-linking a subject moves it: delete then insert is the same statement pair on both dialects.
    await this.database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('oauth_identities').where('issuer', '=', input.issuer).where('subject', '=', input.subject).execute();
      await trx
        .insertInto('oauth_identities')
        .values({ issuer: input.issuer, subject: input.subject, workspace_id: input.workspaceId, created_at: Date.now() })
        .execute();
    });
  }

  async workspaceFor(issuer: string, subject: string): Promise<string | undefined> {
    const r = await this.database.db
      .selectFrom('oauth_identities')
      .select('workspace_id')
      .where('issuer', '=', issuer)
      .where('subject', '=', subject)
      .executeTakeFirst();
    return r?.workspace_id;
  }
}
