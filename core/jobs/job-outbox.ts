import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import type { JobsOf, OutboxJob } from '../ports/storage.ts';

/**
 * The transactional outbox (docs/scaling.md). A write that starts work stores its jobs in the same
 * transaction (`JobsOf`), then hands them to the queue at once. With Redis away the write still
 * commits and answers; its jobs wait in the outbox until a relay (every process runs one) hands
 * them over. Each job keeps its outbox id on the queue, which refuses an id twice, so a hand-over
 * repeated after a lost delete, by two processes at once or after a failover never runs a job twice.
 */

/** A job as a service asks for it; the outbox names it. */
export interface JobRequest {
  type: string;
  payload: unknown;
  /** The workspace it works for (queues bound each workspace's share of their slots). */
  tenant: string;
}

/** Outbox jobs handed to the queue in one go (Redis pipelines them on one connection). */
const HAND_OVER_SLICE = 100;

let queueAway = false;

/**
 * Runs a write that starts jobs: `write` passes the `JobsOf` it is given to its storage call, which
 * makes the jobs from what it wrote (`make`) and stores them with it. Once that committed, the jobs
 * go to the queue; if the queue is away they stay in the outbox, and the write still succeeds.
 */
export async function writeStartingJobs<R>(
  kernel: Kernel,
  make: (written: R) => JobRequest[],
  write: (jobs: JobsOf<R>) => Promise<R>,
): Promise<R> {
  let jobs: OutboxJob[] = [];
  // Called once per attempt of the transaction (a deadlock retry runs it again): the last one committed.
  const result = await write((written) => {
    jobs = make(written).map((j) => ({ id: newId(), type: j.type, payload: j.payload, tenant: j.tenant }));
    return jobs;
  });
  await handOver(kernel, jobs);
  return result;
}

/**
 * Hands outbox jobs to the queue and forgets those it took; answers how many. Never throws: a job
 * the queue did not take stays in the outbox for the relay.
 */
export async function handOver(kernel: Kernel, jobs: OutboxJob[]): Promise<number> {
  // Unknown yet (''), the jobs are kept all the same: the relay hands them over again once it is known.
  const serverId = kernel.queue.serverId ? (kernel.queue.serverId() ?? '') : null;
  const taken: string[] = [];
  for (let i = 0; i < jobs.length; i += HAND_OVER_SLICE) {
    const slice = jobs.slice(i, i + HAND_OVER_SLICE);
    const results = await Promise.allSettled(
      slice.map((j) => kernel.queue.enqueue(j.type, j.payload, { id: j.id, ...(j.tenant ? { tenant: j.tenant } : {}) })),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    results.forEach((r, k) => {
      if (r.status === 'fulfilled') taken.push((slice[k] as OutboxJob).id);
    });
    if (failed) {
      if (!queueAway)
        log.warn('the job queue is away: jobs wait in the outbox until it is back', { error: (failed.reason as Error)?.message });
      queueAway = true;
      break;
    }
  }
  if (taken.length) {
    if (queueAway && taken.length === jobs.length) queueAway = false;
    // A write that fails leaves the jobs to the relay, and the queue refuses them the second time.
    await forget(kernel, taken, serverId).catch((e: Error) => log.debug('outbox write failed', { error: e.message }));
  }
  return taken.length;
}

/**
 * Jobs the queue took leave the outbox, unless its server may lose them (core/ports/queue.ts,
 * serverId): then they stay marked with that server, for the relay to hand over again after a
 * failover (core/jobs/outbox-relay.ts). The server is read before the hand-over: a job marked
 * with the new server was taken by it.
 */
function forget(kernel: Kernel, ids: string[], serverId: string | null): Promise<void> {
  return serverId === null ? kernel.storage.outbox.remove(ids) : kernel.storage.outbox.markHanded(ids, serverId);
}
