import { acquireToken, type RateLimiter, type RateRule, type Take, type TakeCost } from '../../core/ports/rate-limiter.ts';
import { log } from '../../core/log.ts';
import { withTimeout } from '../../core/time-limit.ts';

/** A take Redis has not answered by then is taken from this process's bucket instead. */
const SHARED_TAKE_TIMEOUT_MS = 500;

/**
 * The shared buckets while their server answers, this process's own while it is away (docs/scaling.md):
 * a request never waits on, or fails for, an outage of the rate limiter's store. While away, each
 * process grants the full rule by itself, so N processes may grant up to N times the limit.
 */
export class FallbackRateLimiter implements RateLimiter {
  private away = false;

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    /** Whether the shared store is connected now (a command to a store that is not fails at once). */
    private readonly reachable: () => boolean,
  ) {}

  async take(key: string, rule: RateRule, cost: TakeCost = 1): Promise<Take> {
    if (this.reachable()) {
      try {
        const taken = await withTimeout(this.shared.take(key, rule, cost), SHARED_TAKE_TIMEOUT_MS, 'no answer in time');
        if (this.away) log.info('rate limits are shared again');
        this.away = false;
        return taken;
      } catch (e) {
        this.goneAway((e as Error).message);
      }
    } else this.goneAway('not connected');
    return this.local.take(key, rule, cost);
  }

  /** Pauses the shared bucket while its store answers, else this process's own (as take does). */
  async pause(key: string, rule: RateRule, ms: number): Promise<void> {
    if (this.reachable()) {
      try {
        await withTimeout(this.shared.pause(key, rule, ms), SHARED_TAKE_TIMEOUT_MS, 'no answer in time');
        return;
      } catch (e) {
        this.goneAway((e as Error).message);
      }
    } else this.goneAway('not connected');
    await this.local.pause(key, rule, ms);
  }

  private goneAway(reason: string): void {
    if (!this.away) log.warn('rate limits fall back to this process while their store is away', { reason });
    this.away = true;
  }

  acquire(key: string, rule: RateRule, signal?: AbortSignal, maxWaitMs?: number): Promise<void> {
    return acquireToken(this, key, rule, signal, maxWaitMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}
