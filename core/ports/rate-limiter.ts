import { retryableError } from './queue.ts';

/** A provider's request budget: a token bucket of `burst` tokens refilled at `perSecond`. */
export interface RateRule {
  perSecond: number;
  burst: number;
}

/**
 * Per-provider rate limits enforced by the host, not by plugins (n8n's lesson: each node limiting
 * itself does not work). With Redis the bucket is shared by every worker process.
 */
/** Tokens a take moves: 1 takes one, 0 only looks, -1 gives one back. */
export type TakeCost = -1 | 0 | 1;

/** What taking a token found: how long to wait for one (0 = taken now) and how many are left in the bucket. */
export interface Take {
  waitMs: number;
  /** Tokens left after this take (fractional: the bucket refills continuously). */
  tokens: number;
}

export interface RateLimiter {
  /**
   * Takes a token of `key` if there is one (waitMs 0), else tells the ms until there will be one.
   * `cost` 0 only looks: whether a token is there, taking none; -1 gives one back (up to `burst`):
   * sign-in takes a token before it checks the password and returns it when the password was right.
   */
  take(key: string, rule: RateRule, cost?: TakeCost): Promise<Take>;
  /**
   * Waits until `key` has a token, then takes it. Rejects if `signal` aborts first, and, given
   * `maxWaitMs`, with a retryable JobError carrying the wait as `retryAfterMs` (taking nothing) when
   * the next token is further away than that (a paused budget).
   */
  acquire(key: string, rule: RateRule, signal?: AbortSignal, maxWaitMs?: number): Promise<void>;
  /**
   * Empties `key`'s bucket for `ms`: no token until then, for every process sharing it (a provider
   * said Retry-After). A longer pause already there stays.
   */
  pause(key: string, rule: RateRule, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** `acquire` for any limiter: take, or sleep as long as told and try again (or refuse a wait past `maxWaitMs`). */
export async function acquireToken(
  limiter: Pick<RateLimiter, 'take'>,
  key: string,
  rule: RateRule,
  signal?: AbortSignal,
  maxWaitMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  for (;;) {
    const { waitMs } = await limiter.take(key, rule);
    if (waitMs === 0) return;
    if (waitMs > maxWaitMs)
      throw retryableError(`${key} is paused for ${(waitMs / 1000).toFixed(1)} s: the provider asked to wait`, waitMs);
    await sleep(waitMs, signal);
  }
}

/** Sleeps `ms`, or rejects as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The bucket arithmetic shared by both implementations: given the stored state and the time, how
 * long to wait (0 = take a token now) and the new state.
 */
export function takeToken(
  state: { tokens: number; at: number } | undefined,
  rule: RateRule,
  now: number,
  cost: TakeCost = 1,
): { waitMs: number; state: { tokens: number; at: number } } {
  const prev = state ?? { tokens: rule.burst, at: now };
  const tokens = Math.min(rule.burst, prev.tokens + ((now - prev.at) / 1000) * rule.perSecond);
  if (cost < 0) return { waitMs: 0, state: { tokens: Math.min(rule.burst, tokens - cost), at: now } };
  if (tokens >= 1) return { waitMs: 0, state: { tokens: tokens - cost, at: now } };
  return { waitMs: Math.ceil(((1 - tokens) / rule.perSecond) * 1000), state: { tokens, at: now } };
}

/**
 * A bucket paused for `ms` from `now`: as many tokens owed as `ms` refills, so the next one comes
 * `ms` from now (a deeper debt, a longer pause already there, stays).
 */
export function pauseBucket(
  state: { tokens: number; at: number } | undefined,
  rule: RateRule,
  now: number,
  ms: number,
): { tokens: number; at: number } {
  const prev = state ?? { tokens: rule.burst, at: now };
  const tokens = Math.min(rule.burst, prev.tokens + ((now - prev.at) / 1000) * rule.perSecond);
  return { tokens: Math.min(tokens, 1 - (ms / 1000) * rule.perSecond), at: now };
}

type BudgetedPlugin = { id: string; provider?: { id?: string; rateLimit?: { perSecond: number; burst?: number } } };

/** The plugin's provider budget (its key and rule), when it declares one and runs live (sandbox calls nobody). */
function providerBudget(plugin: BudgetedPlugin, providerMode: 'live' | 'sandbox'): { key: string; rule: RateRule } | undefined {
  const limit = plugin.provider?.rateLimit;
  if (!limit || providerMode === 'sandbox') return undefined;
  return {
    key: `provider:${plugin.provider?.id ?? plugin.id}`,
    rule: { perSecond: limit.perSecond, burst: limit.burst ?? Math.max(1, Math.ceil(limit.perSecond)) },
  };
}

/**
 * The longest a job sleeps for its provider's token: past it (a budget a provider's Retry-After
 * paused), the wait is thrown as a retryable error carrying it, and the rows wait in the queue
 * instead of holding a job slot. Never below two refills, so a slow budget is only paced.
 */
export const BUDGET_SLEEP_MAX_MS = 10_000;

/**
 * Waits for the plugin's provider budget, when it declares one (live mode only). A paused budget
 * (pauseProviderBudget) further than BUDGET_SLEEP_MAX_MS away throws a retryable JobError with
 * `retryAfterMs`, so the job is retried once the provider may be asked again.
 */
export async function awaitProviderBudget(
  limiter: Pick<RateLimiter, 'acquire'>,
  plugin: BudgetedPlugin,
  providerMode: 'live' | 'sandbox',
  signal?: AbortSignal,
): Promise<void> {
  const budget = providerBudget(plugin, providerMode);
  if (!budget) return;
  await limiter.acquire(budget.key, budget.rule, signal, Math.max(BUDGET_SLEEP_MAX_MS, 2000 / budget.rule.perSecond));
}

/**
 * A provider asked to wait `ms` (its Retry-After, already capped by the caller): its budget, when the
 * plugin declares one, gives no token until then, so the other rows and jobs of that provider (every
 * process, on Redis) do not ask it meanwhile. Plugins without a `rateLimit` are not paused.
 */
export async function pauseProviderBudget(
  limiter: Pick<RateLimiter, 'pause'>,
  plugin: BudgetedPlugin,
  providerMode: 'live' | 'sandbox',
  ms: number,
): Promise<void> {
  const budget = providerBudget(plugin, providerMode);
  if (!budget || !(ms > 0)) return;
  await limiter.pause(budget.key, budget.rule, ms);
}
