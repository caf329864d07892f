import { type RateLimiter, type RateRule, sleep, takeToken } from '../../core/jobs/rate-limiter.ts';

/** Token buckets in this process (the embedded default: one process does all the work). */
export class InMemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  async acquire(key: string, rule: RateRule, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const { waitMs, state } = takeToken(this.buckets.get(key), rule, Date.now());
      this.buckets.set(key, state);
      if (waitMs === 0) return;
      await sleep(waitMs, signal);
    }
  }

  async close(): Promise<void> {}
}
