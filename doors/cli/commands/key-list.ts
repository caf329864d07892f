import { isoOrNull, need, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const keyList: AdminCommand = {
  usage: 'key:list --workspace ID',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const keys = await storage.workspaces.listKeys(ws.id);
    return {
      workspace_id: ws.id,
      keys: keys.map((k) => ({
        key_prefix: k.prefix,
        created_at: new Date(k.createdAt).toISOString(),
        revoked: k.revokedAt !== null,
        revoked_at: isoOrNull(k.revokedAt),
        created_by: k.createdBy,
        last_used_at: isoOrNull(k.lastUsedAt),
        monthly_credits: k.monthlyCredits,
      })),
    };
  },
};
