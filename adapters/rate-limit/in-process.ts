import {
  acquireToken,
  pauseBucket,
  type RateLimiter,
  type RateRule,
  type Take,
  type TakeCost,
  takeToken,
} from '../../core/ports/rate-limiter.ts';

/** Token buckets in this process (the embedded default: one process does all the work). */
export class InProcessRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  async take(key: string, rule: RateRule, cost: TakeCost = 1): Promise<Take> {
    const { waitMs, state } = takeToken(this.buckets.get(key), rule, Date.now(), cost);
    this.buckets.set(key, state);
    return { waitMs, tokens: state.tokens };
  }

  acquire(key: string, rule: RateRule, signal?: AbortSignal, maxWaitMs?: number): Promise<void> {
    return acquireToken(this, key, rule, signal, maxWaitMs);
  }

  async pause(key: string, rule: RateRule, ms: number): Promise<void> {
    this.buckets.set(key, pauseBucket(this.buckets.get(key), rule, Date.now(), ms));
  }

  async close(): Promise<void> {}
}
