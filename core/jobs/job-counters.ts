import { log } from '../log.ts';
import type { QueueStats } from '../ports/queue.ts';
import type { AttemptOutcome } from './retry-policy.ts';

/** What a queue counts of its own settled attempts, for /metrics and jobs:stats: the same in every queue. */
export class JobCounters {
  private processed = 0;
  private failed = 0;
  private deadLettered = 0;
  private latencyCount = 0;
  private latencySumMs = 0;
  private latencyMaxMs = 0;

  /** Counts and logs one settled attempt; `fields` name the job in the log line. */
  record(outcome: AttemptOutcome, enqueuedAt: number, fields: Record<string, unknown>): void {
    if (outcome.kind === 'done') {
      const ms = Date.now() - enqueuedAt;
      this.processed++;
      this.latencyCount++;
      this.latencySumMs += ms;
      this.latencyMaxMs = Math.max(this.latencyMaxMs, ms);
      log.debug('job completed', { ...fields, latency_ms: ms });
    } else if (outcome.kind === 'retry') {
      this.failed++;
      log.warn('job failed, will retry', { ...fields, delay_ms: outcome.delayMs, error: outcome.error });
    } else {
      this.failed++;
      this.deadLettered++;
      log.error('job dead-lettered', { ...fields, reason: outcome.reason, error: outcome.error });
    }
  }

  snapshot(): Pick<QueueStats, 'processed' | 'failed' | 'deadLettered' | 'latency'> {
    return {
      processed: this.processed,
      failed: this.failed,
      deadLettered: this.deadLettered,
      latency: { count: this.latencyCount, sumMs: this.latencySumMs, maxMs: this.latencyMaxMs },
    };
  }
}
