import { BalanceOverflowError } from '../credits/credit-types.ts';
import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { RateRule } from '../ports/rate-limiter.ts';
import { log } from '../log.ts';
import type { Workspace } from '../model.ts';
import { planRules } from '../plans.ts';

const monthlyGranted = new Set<string>();

/** The plan's monthly credits, granted once per calendar month (UTC) on the first call of the month. */
async function grantMonthlyCredits(kernel: Kernel, workspace: Workspace, amount: number): Promise<void> {
  const month = new Date().toISOString().slice(0, 7);
  const key = `monthly:${workspace.id}:${month}`;
  if (monthlyGranted.has(key)) return;
  // The idempotency key makes the grant happen once, whichever process sees the first call.
  try {
    await kernel.storage.credits.grant(workspace.id, amount, { idemKey: key, note: `${workspace.plan} plan, ${month}` });
  } catch (e) {
    // A balance at the largest one allowed simply gets no more; the call itself goes on.
    if (!(e instanceof BalanceOverflowError)) throw e;
    log.warn('monthly credits not granted: the balance is at its limit', { workspace_id: workspace.id, balance: e.balance });
  }
  monthlyGranted.add(key);
}

/**
 * The rate-limit headers of an answer (RateLimit-Limit, -Remaining, -Reset): the plan's requests per
 * minute, the whole requests left in the key's bucket, and the seconds until it is full again.
 */
function rateLimitHeaders(limit: number, rule: RateRule, tokens: number): Record<string, string> {
  return {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(Math.max(0, Math.floor(tokens))),
    'ratelimit-reset': String(Math.max(0, Math.ceil((rule.burst - tokens) / rule.perSecond))),
  };
}

/**
 * Checks a call that passed authentication against its plan: the per-key request rate (429 with
 * Retry-After when over it, shared across processes through Redis) and the monthly credit grant.
 * Both doors (REST and MCP) call it. Answers the rate-limit headers REST sends with the answer
 * (none when the plan sets no rate); a 429 carries them too.
 */
export async function admitCall(kernel: Kernel, workspace: Workspace, callerKey: string): Promise<Record<string, string>> {
  const rules = planRules(workspace.plan);
  let headers: Record<string, string> = {};
  if (rules.requestsPerMinute !== null) {
    const rule = { perSecond: rules.requestsPerMinute / 60, burst: rules.requestsPerMinute };
    const { waitMs, tokens } = await kernel.rateLimiter.take(`caller:${callerKey}`, rule);
    headers = rateLimitHeaders(rules.requestsPerMinute, rule, tokens);
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ServiceError(
        'rate_limited',
        `Too many requests: the ${workspace.plan} plan allows ${rules.requestsPerMinute} per minute per key; retry in ${seconds} s`,
        { headers: { ...headers, 'retry-after': String(seconds) } },
      );
    }
  }
  if (rules.monthlyCredits > 0) await grantMonthlyCredits(kernel, workspace, rules.monthlyCredits);
  return headers;
}
