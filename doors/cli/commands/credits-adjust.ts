import { MAX_BALANCE } from '../../../core/credits/credit-types.ts';
import { need, UsageError, wholeNumber, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';

/** Longest adjustment reason: it is kept in the ledger's note (varchar(255)). */
const MAX_REASON_CHARS = 255;

export const creditsAdjust: AdminCommand = {
  usage: 'credits:adjust --workspace ID --amount N --reason TEXT   (N may be negative: --amount=-50)',
  async run({ values, storage }) {
    const ws = await workspaceOrFail(storage, need(values, 'workspace'));
    const delta = wholeNumber(
      need(values, 'amount'),
      'amount',
      -MAX_BALANCE,
      MAX_BALANCE,
      `a non-zero whole number of credits between -${MAX_BALANCE} and ${MAX_BALANCE} (negative takes credits away: --amount=-50)`,
      true,
    );
    const reason = need(values, 'reason').trim();
    if (reason === '') throw new UsageError('--reason must say why (it is kept in the ledger)');
    if ([...reason].length > MAX_REASON_CHARS) throw new UsageError(`--reason must be at most ${MAX_REASON_CHARS} characters`);
    const outcome = await storage.credits.adjust(ws.id, delta, { note: reason });
    if (!outcome.ok) {
      throw new UsageError(
        outcome.reason === 'negative'
          ? `refused: the balance is ${outcome.balance}; adjusting by ${delta} would take it below zero`
          : `refused: the balance is ${outcome.balance}; adjusting by ${delta} would pass the largest balance allowed (${MAX_BALANCE})`,
      );
    }
    return { workspace_id: ws.id, adjusted: delta, reason, balance: outcome.balance };
  },
};
