import { keyPrefix } from '../../../core/identity/api-keys.ts';
import { monthlyCap, need, UsageError } from '../args.ts';
import type { AdminCommand } from '../command.ts';

export const keyCap: AdminCommand = {
  usage: "key:cap --key PREFIX --monthly-credits N|none      (sets or removes a live key's monthly cap)",
  async run({ values, storage }) {
    const prefix = keyPrefix(need(values, 'key'));
    const cap = monthlyCap(need(values, 'monthly-credits'));
    if (!(await storage.workspaces.setKeyCap(prefix, cap))) throw new UsageError(`no live key with prefix ${prefix} (see key:list)`);
    return { key_prefix: prefix, monthly_credits: cap };
  },
};
