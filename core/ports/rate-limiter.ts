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
  /** Waits until `key` has a token, then takes it. Rejects if `signal` aborts first. */
  acquire(key: string, rule: RateRule, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** `acquire` for any limiter: take, or sleep as long as told and try again. */
export async function acquireToken(limiter: Pick<RateLimiter, 'take'>, key: string, rule: RateRule, signal?: AbortSignal): Promise<void> {
  for (;;) {
    const { waitMs } = await limiter.take(key, rule);
    if (waitMs === 0) return;
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

/** Waits for the plugin's provider budget, when it declares one (live mode only: sandbox calls nobody). */
export async function awaitProviderBudget(
  limiter: Pick<RateLimiter, 'acquire'>,
  plugin: { id: string; provider?: { id?: string; rateLimit?: { perSecond: number; burst?: number } } },
  providerMode: 'live' | 'sandbox',
  signal?: AbortSignal,
): Promise<void> {
  const limit = plugin.provider?.rateLimit;
  if (!limit || providerMode === 'sandbox') return;
  await limiter.acquire(
    `provider:${plugin.provider?.id ?? plugin.id}`,
    { perSecond: limit.perSecond, burst: limit.burst ?? Math.max(1, Math.ceil(limit.perSecond)) },
    signal,
  );
}
