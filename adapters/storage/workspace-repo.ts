import type { Kysely, Selectable } from 'kysely';
import { newId } from '../../core/ids.ts';
import type { Workspace } from '../../core/model.ts';
import type { ApiKeyRecord, ApiKeySummary, FoundKey, WorkspaceRepo } from '../../core/ports/storage.ts';
import { type ReusableQuery, reusableQuery } from './compiled-queries.ts';
import type { Database } from './database.ts';
import { PROJECT_FIELDS, toProject } from './project-repo.ts';
import type { ProjectTable, Tables, WorkspaceTable } from './tables.ts';

const toWorkspace = (r: WorkspaceTable): Workspace => ({ id: r.id, name: r.name, plan: r.plan, createdAt: Number(r.created_at) });

const toKey = (r: { key_id: string; id: string; prefix: string; key_hash: string; revoked_at: number | null }): ApiKeyRecord => ({
  id: r.key_id,
  workspaceId: r.id,
  prefix: r.prefix,
  keyHash: r.key_hash,
  revokedAt: r.revoked_at,
});

/** A new key's record. */
function keyRow(
  input: { workspaceId: string; prefix: string; keyHash: string; createdBy?: string | null; monthlyCredits?: number | null },
  at: number,
) {
  return {
    id: newId(),
    workspace_id: input.workspaceId,
    prefix: input.prefix,
    key_hash: input.keyHash,
    created_at: at,
    revoked_at: null,
    created_by: input.createdBy ?? null,
    monthly_credits: input.monthlyCredits ?? null,
  };
}

/** Revokes the live key with this prefix (of this workspace, when given); whether there was one. */
async function revokeLive(db: Kysely<Tables>, prefix: string, at: number, workspaceId?: string): Promise<boolean> {
  let q = db.updateTable('api_keys').set({ revoked_at: at }).where('prefix', '=', prefix).where('revoked_at', 'is', null);
  if (workspaceId !== undefined) q = q.where('workspace_id', '=', workspaceId);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

type RowOf<Q extends { execute(): Promise<unknown[]> }> = Awaited<ReturnType<Q['execute']>>[number];

export class SqlWorkspaceRepo implements WorkspaceRepo {
  /** Every request runs one of these: compiled once (see reusableQuery). */
  private readonly keyOnly: ReusableQuery<RowOf<ReturnType<SqlWorkspaceRepo['keyQuery']>>>;
  private readonly keyAndProject: ReusableQuery<RowOf<ReturnType<SqlWorkspaceRepo['keyAndProjectQuery']>>>;

  constructor(private readonly database: Database) {
    this.keyOnly = reusableQuery(['hash'], (v) => this.keyQuery(v('hash')));
    this.keyAndProject = reusableQuery(['hash', 'project'], (v) => this.keyAndProjectQuery(v('hash'), v('project')));
  }

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

  async addKey(input: {
    workspaceId: string;
    prefix: string;
    keyHash: string;
    createdBy?: string | null;
    monthlyCredits?: number | null;
  }): Promise<ApiKeyRecord> {
    const row = keyRow(input, Date.now());
    await this.db.insertInto('api_keys').values(row).execute();
    return { id: row.id, workspaceId: row.workspace_id, prefix: row.prefix, keyHash: row.key_hash, revokedAt: null };
  }

  private keyQuery(hash: string) {
    return this.db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select(['k.id as key_id', 'k.prefix', 'k.key_hash', 'k.revoked_at', 'w.id', 'w.name', 'w.plan', 'w.created_at'])
      .where('k.key_hash', '=', hash);
  }

  private keyAndProjectQuery(hash: string, projectId: string) {
    // The workspace's live project of that id, in the same read (one round trip per project request).
    return this.keyQuery(hash)
      .leftJoin('projects as p', (j) => j.onRef('p.workspace_id', '=', 'w.id').on('p.id', '=', projectId).on('p.deleted_at', 'is', null))
      .select(PROJECT_FIELDS.map((f) => `p.${f} as p_${f}` as const));
  }

  async findKey(keyHash: string, projectId?: string): Promise<FoundKey | undefined> {
    if (projectId === undefined) {
      const [r] = await this.keyOnly.run(this.db, { hash: keyHash });
      return r && { key: toKey(r), workspace: toWorkspace(r) };
    }
    const [r] = await this.keyAndProject.run(this.db, { hash: keyHash, project: projectId });
    if (!r) return undefined;
    const fields = r as unknown as Record<string, unknown>;
    const project =
      fields.p_pk === null
        ? null
        : toProject(Object.fromEntries(PROJECT_FIELDS.map((f) => [f, fields[`p_${f}`]])) as Selectable<ProjectTable>);
    return { key: toKey(r), workspace: toWorkspace(r), project };
  }

  async revokeKey(prefix: string): Promise<boolean> {
    return revokeLive(this.db, prefix, Date.now());
  }

  async revokeKeyOf(workspaceId: string, prefix: string): Promise<boolean> {
    return revokeLive(this.db, prefix, Date.now(), workspaceId);
  }

  async revokeKeysMadeBy(workspaceId: string, userId: string): Promise<number> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('workspace_id', '=', workspaceId)
      .where('created_by', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async keyIsLive(workspaceId: string, keyId: string): Promise<boolean> {
    const r = await this.db
      .selectFrom('api_keys')
      .select('id')
      .where('id', '=', keyId)
      .where('workspace_id', '=', workspaceId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return r !== undefined;
  }

  async rotateKey(
    workspaceId: string,
    prefix: string,
    next: { prefix: string; keyHash: string; createdBy: string | null },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const now = Date.now();
      // The new key keeps the old one's monthly cap.
      const old = await trx
        .selectFrom('api_keys')
        .select('monthly_credits')
        .where('workspace_id', '=', workspaceId)
        .where('prefix', '=', prefix)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      if (!(await revokeLive(trx, prefix, now, workspaceId))) return false;
      await trx
        .insertInto('api_keys')
        .values(keyRow({ workspaceId, ...next, monthlyCredits: old?.monthly_credits ?? null }, now))
        .execute();
      return true;
    });
  }

  async listKeys(workspaceId: string): Promise<ApiKeySummary[]> {
    const rows = await this.db
      .selectFrom('api_keys as k')
      .leftJoin('users as u', 'u.id', 'k.created_by')
      .select(['k.id', 'k.prefix', 'k.created_at', 'k.revoked_at', 'k.last_used_at', 'k.monthly_credits', 'u.email'])
      .where('k.workspace_id', '=', workspaceId)
      .orderBy('k.created_at')
      .orderBy('k.id')
      .execute();
    return rows.map((r) => ({
      prefix: r.prefix,
      createdAt: Number(r.created_at),
      revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
      createdBy: r.email ?? null,
      lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
      monthlyCredits: r.monthly_credits === null ? null : Number(r.monthly_credits),
      id: r.id,
    }));
  }

  async setKeyCap(prefix: string, monthlyCredits: number | null, workspaceId?: string): Promise<boolean> {
    let q = this.db
      .updateTable('api_keys')
      .set({ monthly_credits: monthlyCredits })
      .where('prefix', '=', prefix)
      .where('revoked_at', 'is', null);
    if (workspaceId !== undefined) q = q.where('workspace_id', '=', workspaceId);
    const r = await q.executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return true;
    // MariaDB counts changed rows only: setting the same cap again still found the key.
    let found = this.db.selectFrom('api_keys').select('id').where('prefix', '=', prefix).where('revoked_at', 'is', null);
    if (workspaceId !== undefined) found = found.where('workspace_id', '=', workspaceId);
    return (await found.executeTakeFirst()) !== undefined;
  }

  async touchKey(keyId: string, at: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
  }

  async findByName(name: string): Promise<Workspace | undefined> {
    const r = await this.db
      .selectFrom('workspaces')
      .selectAll()
      .where('name', '=', name)
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst();
    return r && toWorkspace(r);
  }
}
