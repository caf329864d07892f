import type { Redis } from 'ioredis';
import { log } from '../../core/log.ts';
import type { Running } from './redis-envelope.ts';
import { GROUP } from './redis-group.ts';
import { heartbeat } from './redis-scripts.ts';

/** What renewing leases reads of the queue. */
export interface LeaseHost {
  readonly cmd: Redis;
  readonly stream: string;
  readonly workerId: string;
  readonly running: Map<string, Running>;
  fields(run: Running): Record<string, unknown>;
  connectionTrouble(e: unknown): void;
}

/**
 * Renews the lease of running jobs (XCLAIM JUSTID, which does not bump the delivery count); a job
 * found owned by another consumer is aborted here. It is not ours any more when this worker stalled
 * past the visibility timeout, or when a failover lost its delivery and another worker read it anew.
 */
export async function renewLeases(host: LeaseHost): Promise<void> {
  const ids = [...host.running.keys()];
  if (ids.length === 0) return;
  try {
    const lost = (await heartbeat.run(host.cmd, [host.stream], [GROUP, host.workerId, ...ids])) as string[];
    for (const id of lost) {
      const run = host.running.get(id);
      if (!run || run.lost || run.settling) continue; // settled meanwhile
      run.lost = true;
      run.controller.abort(new Error('job lease lost: another worker took it over'));
      log.warn('job lease lost (this worker stalled past the visibility timeout, or a failover lost its delivery)', host.fields(run));
    }
  } catch (e) {
    host.connectionTrouble(e);
  }
}
