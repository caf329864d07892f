import { need, plan, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const planSet: AdminCommand = {
  usage: 'plan:set --workspace ID --plan P',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const p = plan(need(values, 'plan'));
    await storage.workspaces.setPlan(ws.id, p);
    return { workspace_id: ws.id, plan: p };
  },
};
