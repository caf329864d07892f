import { count, need, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const creditsLedger: AdminCommand = {
  usage: 'credits:ledger --workspace ID [--limit N]',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const entries = await storage.credits.entries(ws.id, values.limit ? count(String(values.limit), 'limit') : 100);
    return {
      workspace_id: ws.id,
      balance: await storage.credits.balance(ws.id),
      entries: entries.map((e) => ({ ...e, createdAt: new Date(e.createdAt).toISOString() })),
    };
  },
};
