import { newId } from '../../core/ids.ts';
import type { Workspace } from '../../core/model.ts';
import type { ApiKeyRecord, WorkspaceRepo } from '../../core/storage.ts';
import type { Database } from './database.ts';
import type { WorkspaceTable } from './tables.ts';

const toWorkspace = (r: WorkspaceTable): Workspace => ({ id: r.id, name: r.name, plan: r.plan, createdAt: Number(r.created_at) });

export class SqlWorkspaceRepo implements WorkspaceRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(input: { name: string; plan: string }): Promise<Workspace> {
    const row = { id: newId(), name: input.name, plan: input.plan, created_at: Date.now() };
    await this.db.insertInto('workspaces').values(row).execute();
    return toWorkspace(row);
  }

  async get(id: string): Promise<Workspace | undefined> {
    const r = await this.db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toWorkspace(r);
  }

  async setPlan(id: string, plan: string): Promise<boolean> {
    const r = await this.db.updateTable('workspaces').set({ plan }).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0 || (await this.get(id)) !== undefined;
  }

  async addKey(input: { workspaceId: string; prefix: string; keyHash: string }): Promise<ApiKeyRecord> {
    const row = {
      id: newId(),
      workspace_id: input.workspaceId,
      prefix: input.prefix,
      key_hash: input.keyHash,
      created_at: Date.now(),
      revoked_at: null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { id: row.id, workspaceId: row.workspace_id, prefix: row.prefix, keyHash: row.key_hash, revokedAt: null };
  }

  async findKey(keyHash: string): Promise<{ key: ApiKeyRecord; workspace: Workspace } | undefined> {
    const r = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select([
        'k.id as key_id',
        'k.prefix',
        'k.key_hash',
        'k.revoked_at',
        'w.id',
        'w.name',
        'w.plan',
        'w.created_at',
      ])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    if (!r) return undefined;
    return {
      key: { id: r.key_id, workspaceId: r.id, prefix: r.prefix, keyHash: r.key_hash, revokedAt: r.revoked_at },
      workspace: toWorkspace(r),
    };
  }

  async revokeKey(prefix: string): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('prefix', '=', prefix)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
