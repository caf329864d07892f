import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { KeyMonth } from './credit-types.ts';

/** The 402 of a key whose monthly cap is spent (or would be passed by `needed` credits). */
export function keyCapError(month: KeyMonth, needed?: number): ServiceError {
  const resets = new Date(month.resetsAt).toISOString();
  const what = needed === undefined ? 'is spent' : `leaves ${Math.max(0, month.cap - month.spent)}; this needs ${needed}`;
  return new ServiceError('insufficient_credits', {
    code: 'key_cap_reached',
    message: `This API key's monthly cap of ${month.cap} credits ${what} (${month.spent} spent this month, resets ${resets}). Raise it in the console (Settings → API keys) or with bun run admin key:cap, or use another key.`,
    monthly_credits: month.cap,
    spent_this_month: month.spent,
    resets_at: resets,
  });
}

/** Refuses a call that would start spending with a key whose monthly cap is spent (docs/enrichment.md). */
export async function refuseSpentKey(kernel: Kernel, keyId: string): Promise<void> {
  const month = await kernel.storage.credits.keyMonth(keyId);
  if (month && month.spent >= month.cap) throw keyCapError(month);
}
