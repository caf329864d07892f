import { MAX_BALANCE } from '../../../core/credits/credit-types.ts';
import { grantOrFail, need, POSITIVE_CREDITS, wholeNumber, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const creditsGrant: AdminCommand = {
  usage: 'credits:grant --workspace ID --amount N           (N > 0)',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const credits = wholeNumber(need(values, 'amount'), 'amount', 1, MAX_BALANCE, POSITIVE_CREDITS);
    return { workspace_id: ws.id, balance: await grantOrFail(storage, ws.id, credits, 'credits:grant') };
  },
};
