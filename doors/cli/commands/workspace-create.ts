import { MAX_BALANCE } from '../../../core/credits/credit-types.ts';
import { issueApiKey } from '../../../core/identity/api-keys.ts';
import { need, plan, wholeNumber } from '../args.ts';
import type { AdminCommand } from '../command.ts';

/** Credits of a workspace made by workspace:create without --credits (BOOTSTRAP_CREDITS' default too). */
export const DEFAULT_WORKSPACE_CREDITS = 1000;

export const workspaceCreate: AdminCommand = {
  usage: `workspace:create --name N [--plan free|pro] [--credits N]   (credits default ${DEFAULT_WORKSPACE_CREDITS})`,
  async run({ values, storage }) {
    const name = need(values, 'name');
    const p = plan(String(values.plan ?? 'pro'));
    // Enough to try the README walkthrough with the new key; --credits 0 gives none.
    const credits =
      values.credits === undefined
        ? DEFAULT_WORKSPACE_CREDITS
        : wholeNumber(String(values.credits), 'credits', 0, MAX_BALANCE, `a whole number of credits from 0 to ${MAX_BALANCE}`);
    const ws = await storage.workspaces.create({ name, plan: p });
    if (credits > 0) await storage.credits.grant(ws.id, credits, { note: 'workspace:create' });
    const { api_key, prefix } = await issueApiKey(storage.workspaces, ws.id);
    return { workspace_id: ws.id, name: ws.name, plan: ws.plan, credits, api_key, key_prefix: prefix };
  },
};
