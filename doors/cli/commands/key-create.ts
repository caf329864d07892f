import { issueApiKey } from '../../../core/identity/api-keys.ts';
import { monthlyCap, need, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const keyCreate: AdminCommand = {
  usage: 'key:create --workspace ID [--monthly-credits N]   (N > 0: the most the key may spend per calendar month, UTC)',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const cap = values['monthly-credits'] === undefined ? null : monthlyCap(String(values['monthly-credits']));
    const { api_key, prefix } = await issueApiKey(storage.workspaces, ws.id, undefined, undefined, cap);
    return { workspace_id: ws.id, api_key, key_prefix: prefix, monthly_credits: cap };
  },
};
