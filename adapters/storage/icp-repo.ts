import type { IcpDefinition } from '../../core/icp/definition.ts';
import { newId } from '../../core/ids.ts';
import type { IcpRecord, IcpRepo } from '../../core/ports/storage.ts';
import type { Database } from './database.ts';
import type { IcpTable } from './tables.ts';

const toIcp = (r: IcpTable): IcpRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  definition: JSON.parse(r.definition) as IcpDefinition,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** ICPs over Kysely; every read and write is scoped to the workspace, so another's id is "missing". */
export class SqlIcpRepo implements IcpRepo {
  constructor(private readonly database: Database) {}

  private get db() {
    return this.database.db;
  }

  async create(input: { workspaceId: string; name: string; definition: IcpDefinition }): Promise<IcpRecord> {
    const now = Date.now();
    const row: IcpTable = {
      id: newId(),
      workspace_id: input.workspaceId,
      name: input.name,
      definition: JSON.stringify(input.definition),
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('icps').values(row).execute();
    return toIcp(row);
  }

  async get(workspaceId: string, id: string): Promise<IcpRecord | undefined> {
    const r = await this.db.selectFrom('icps').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
    return r && toIcp(r);
  }

  async list(workspaceId: string): Promise<IcpRecord[]> {
    const rows = await this.db
      .selectFrom('icps')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toIcp);
  }

  async update(workspaceId: string, id: string, patch: { name?: string; definition?: IcpDefinition }): Promise<IcpRecord | undefined> {
    const set: Partial<IcpTable> = { updated_at: Date.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.definition !== undefined) set.definition = JSON.stringify(patch.definition);
    await this.db.updateTable('icps').set(set).where('id', '=', id).where('workspace_id', '=', workspaceId).execute();
    return this.get(workspaceId, id);
  }

  async delete(workspaceId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('icps').where('id', '=', id).where('workspace_id', '=', workspaceId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
