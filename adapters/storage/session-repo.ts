import type { Role } from '../../core/model.ts';
import type { FoundSession, SessionRecord, SessionRepo } from '../../core/ports/storage.ts';
import { reusableQuery } from './compiled-queries.ts';
import type { Database } from './database.ts';
import { toWorkspaceOf } from './user-repo.ts';

/** Console sessions (migration 015): found with their user, workspace and role in one read, on every console request. */
export class SqlSessionRepo implements SessionRepo {
  private readonly findQuery;

  constructor(private readonly database: Database) {
    this.findQuery = reusableQuery(['hash', 'now'], (v) =>
      database.db
        .selectFrom('sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        // A member removed from the workspace loses the sessions in it at once.
        .innerJoin('memberships as m', (j) => j.onRef('m.user_id', '=', 's.user_id').onRef('m.workspace_id', '=', 's.workspace_id'))
        .innerJoin('workspaces as w', 'w.id', 's.workspace_id')
        .select([
          's.token_hash',
          's.user_id',
          's.workspace_id',
          's.csrf_token',
          's.created_at',
          's.expires_at',
          'u.email',
          'u.created_at as u_created_at',
          'm.role',
          'w.id as w_id',
          'w.name as w_name',
          'w.plan as w_plan',
          'w.created_at as w_created_at',
        ])
        .where('s.token_hash', '=', v('hash'))
        .where('s.expires_at', '>', v('now')),
    );
  }

  async create(s: SessionRecord): Promise<void> {
    await this.database.db
      .insertInto('sessions')
      .values({
        token_hash: s.tokenHash,
        user_id: s.userId,
        workspace_id: s.workspaceId,
        csrf_token: s.csrfToken,
        created_at: s.createdAt,
        expires_at: s.expiresAt,
      })
      .execute();
  }

  async find(tokenHash: string, now: number): Promise<FoundSession | undefined> {
    const [r] = await this.findQuery.run(this.database.db, { hash: tokenHash, now });
    if (!r) return undefined;
    return {
      session: {
        tokenHash: r.token_hash,
        userId: r.user_id,
        workspaceId: r.workspace_id,
        csrfToken: r.csrf_token,
        createdAt: Number(r.created_at),
        expiresAt: Number(r.expires_at),
      },
      user: { id: r.user_id, email: r.email, createdAt: Number(r.u_created_at) },
      workspace: toWorkspaceOf(r),
      role: r.role as Role,
    };
  }

  async extend(tokenHash: string, expiresAt: number): Promise<void> {
    await this.database.db.updateTable('sessions').set({ expires_at: expiresAt }).where('token_hash', '=', tokenHash).execute();
  }

  async remove(tokenHash: string): Promise<void> {
    await this.database.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  async removeForUser(userId: string): Promise<void> {
    await this.database.db.deleteFrom('sessions').where('user_id', '=', userId).execute();
  }
}
