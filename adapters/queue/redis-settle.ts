import type { Redis } from 'ioredis';
import type { AttemptOutcome } from '../../core/jobs/retry-policy.ts';
import { isNoGroup, sleep } from './redis-connection.ts';
import { deadFields, type Envelope, type Running } from './redis-envelope.ts';
import { GROUP } from './redis-group.ts';
import { settleDead, settleDone, settleRetry } from './redis-scripts.ts';

/** What settling needs of the queue: its command connection and what it knows about it. */
export interface SettleHost {
  readonly cmd: Redis;
  readonly workerId: string;
  readonly keys: { stream: string; delayed: string; dead: string };
  readonly deadMaxLength: number;
  /** Counts reconnections of `cmd`: a script sent again after one may have run the first time. */
  generation(): number;
  /** True once shutdown gave up on running jobs: they stay pending for another worker. */
  abandoned(): boolean;
  /** A retry went to the delayed set, due in `delayMs`. */
  retryQueued(delayMs: number): void;
  connectionTrouble(e: unknown): void;
}

/**
 * Acks, retries or dead-letters an attempt in one script, retrying while Redis is away. Answers
 * 'settled', or 'lost' when another consumer owns the entry, or 'abandoned' at shutdown. An entry
 * no longer pending counts as settled when the connection dropped meanwhile (the script ran but its
 * answer was lost, and it was sent again); otherwise another consumer took it over and finished it.
 */
export async function settleAttempt(host: SettleHost, run: Running, outcome: AttemptOutcome): Promise<'settled' | 'lost' | 'abandoned'> {
  const { stream, delayed, dead } = host.keys;
  const base = [GROUP, host.workerId, run.entryId];
  let delay = 100;
  let retried = false;
  for (;;) {
    if (run.lost || host.abandoned()) return 'abandoned';
    const generation = host.generation();
    try {
      let result: unknown;
      if (outcome.kind === 'done') {
        result = await settleDone.run(host.cmd, [stream], base);
      } else if (outcome.kind === 'retry') {
        const next: Envelope = { ...run.env, attempt: run.job.attempt + 1, lastError: outcome.error };
        result = await settleRetry.run(host.cmd, [stream, delayed], [...base, outcome.delayMs, JSON.stringify(next)]);
        if (result === 1) host.retryQueued(outcome.delayMs);
      } else {
        result = await settleDead.run(
          host.cmd,
          [stream, dead],
          [...base, host.deadMaxLength, ...deadFields(run, outcome.reason, outcome.error, host.workerId)],
        );
      }
      if (result === 1 || (result === 0 && (retried || host.generation() !== generation))) return 'settled';
      return 'lost';
    } catch (e) {
      if (isNoGroup(e)) return 'lost';
      retried = true;
      host.connectionTrouble(e);
      await sleep(delay);
      delay = Math.min(delay * 2, 2000);
    }
  }
}
