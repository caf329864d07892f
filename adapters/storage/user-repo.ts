import { newId } from '../../core/ids.ts';
import type { Role, User, Workspace } from '../../core/model.ts';
import type { Invitation, Member, UserRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';

const toUser = (r: { id: string; email: string; created_at: number }): User => ({
  id: r.id,
  email: r.email,
  createdAt: Number(r.created_at),
});

export const toWorkspaceOf = (r: { w_id: string; w_name: string; w_plan: string; w_created_at: number }): Workspace => ({
  id: r.w_id,
  name: r.w_name,
  plan: r.w_plan,
  createdAt: Number(r.w_created_at),
});

/** Users and their memberships (migration 015). Emails arrive lower-cased (core/identity/accounts.ts). */
export class SqlUserRepo implements UserRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(input: { email: string; passwordHash: string }): Promise<User | undefined> {
    const row = { id: newId(), email: input.email, password_hash: input.passwordHash, created_at: Date.now() };
    try {
      await this.db.insertInto('users').values(row).execute();
    } catch (e) {
      if (this.database.dialect.errors.isDuplicateKey(e)) return undefined;
      throw e;
    }
    return toUser(row);
  }

  async findByEmail(email: string): Promise<(User & { passwordHash: string }) | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    return r && { ...toUser(r), passwordHash: r.password_hash };
  }

  async get(id: string): Promise<User | undefined> {
    const r = await this.db.selectFrom('users').select(['id', 'email', 'created_at']).where('id', '=', id).executeTakeFirst();
    return r && toUser(r);
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async setRole(workspaceId: string, userId: string, role: Role): Promise<void> {
    await this.database.dialect
      .upsert(
        this.db.insertInto('memberships').values({ workspace_id: workspaceId, user_id: userId, role, created_at: Date.now() }),
        ['workspace_id', 'user_id'],
        (inserted) => ({ role: inserted('role') }),
      )
      .execute();
  }

  async removeMember(workspaceId: string, userId: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('memberships')
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async workspacesOf(userId: string): Promise<{ workspace: Workspace; role: Role }[]> {
    const rows = await this.db
      .selectFrom('memberships as m')
      .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
      .select(['m.role', 'w.id as w_id', 'w.name as w_name', 'w.plan as w_plan', 'w.created_at as w_created_at'])
      .where('m.user_id', '=', userId)
      .orderBy('m.created_at')
      .orderBy('w.id')
      .execute();
    return rows.map((r) => ({ workspace: toWorkspaceOf(r), role: r.role as Role }));
  }

  async members(workspaceId: string): Promise<Member[]> {
    const rows = await this.db
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['u.id', 'u.email', 'u.created_at', 'm.role', 'm.created_at as since'])
      .where('m.workspace_id', '=', workspaceId)
      .orderBy('m.created_at')
      .orderBy('u.email')
      .execute();
    return rows.map((r) => ({ user: toUser(r), role: r.role as Role, since: Number(r.since) }));
  }

  async invite(workspaceId: string, email: string, role: Role, invitedBy: string): Promise<string> {
    const id = newId();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('invitations').where('workspace_id', '=', workspaceId).where('email', '=', email).execute();
      await trx
        .insertInto('invitations')
        .values({ id, workspace_id: workspaceId, email, role, invited_by: invitedBy, created_at: Date.now() })
        .execute();
    });
    return id;
  }

  async invitationsOf(workspaceId: string): Promise<Invitation[]> {
    const rows = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toInvitation);
  }

  async invitationsFor(email: string): Promise<(Invitation & { workspace: Workspace })[]> {
    const rows = await this.db
      .selectFrom('invitations as i')
      .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
      .selectAll('i')
      .select(['w.id as w_id', 'w.name as w_name', 'w.plan as w_plan', 'w.created_at as w_created_at'])
      .where('i.email', '=', email)
      .orderBy('i.created_at')
      .execute();
    return rows.map((r) => ({ ...toInvitation(r), workspace: toWorkspaceOf(r) }));
  }

  async takeInvitation(id: string, email: string): Promise<Invitation | undefined> {
    const row = await this.db.selectFrom('invitations').selectAll().where('id', '=', id).where('email', '=', email).executeTakeFirst();
    if (!row) return undefined;
    const r = await this.db.deleteFrom('invitations').where('id', '=', id).where('email', '=', email).executeTakeFirst();
    // Of two answers at once, one takes it.
    return Number(r.numDeletedRows) > 0 ? toInvitation(row) : undefined;
  }

  async withdrawInvitation(workspaceId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('invitations').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}

const toInvitation = (r: { id: string; workspace_id: string; email: string; role: string; created_at: number }): Invitation => ({
  id: r.id,
  workspaceId: r.workspace_id,
  email: r.email,
  role: r.role as Role,
  createdAt: Number(r.created_at),
});
