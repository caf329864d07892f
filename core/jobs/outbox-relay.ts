import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { handOver } from './job-outbox.ts';

/** The relay leaves fresher jobs to the write that stored them (it hands them over right after its commit). */
const RELAY_MIN_AGE_MS = 2_000;
const RELAY_BATCH = 500;
/** How often the jobs a queue took longer ago than JOB_OUTBOX_KEEP_S are forgotten. */
const FORGET_EVERY_MS = 10_000;

/**
 * Every process relays the outbox (a job must not wait for the process that stored it): each tick
 * hands over what is older than RELAY_MIN_AGE_MS. When the queue's server changed (core/ports/queue.ts,
 * serverId: a Sentinel failover, a restart), it hands over again what another server took within
 * JOB_OUTBOX_KEEP_S: the promoted replica may lack it, replication being asynchronous. Jobs it has
 * are refused by id, so only the lost ones run. Answers a stop function.
 */
export function startOutboxRelay(kernel: Kernel, intervalMs = 1_000): () => void {
  let busy = false;
  let seenServer: string | undefined;
  let forgotAt = 0;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      await relayDue(kernel);
      const server = kernel.queue.serverId?.();
      if (server && server !== seenServer && (await handOverAgain(kernel, server, seenServer))) seenServer = server;
      if (Date.now() - forgotAt >= FORGET_EVERY_MS) {
        forgotAt = Date.now();
        while ((await kernel.storage.outbox.forgetHanded(kernel.config.outboxKeepMs)) > 0);
      }
    } catch (e) {
      log.debug('outbox relay skipped', { error: (e as Error).message }); // the database is away: next tick
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

async function relayDue(kernel: Kernel): Promise<void> {
  let relayed = 0;
  for (;;) {
    const due = await kernel.storage.outbox.due(RELAY_MIN_AGE_MS, RELAY_BATCH);
    const n = due.length ? await handOver(kernel, due) : 0;
    relayed += n;
    if (n < RELAY_BATCH) break;
  }
  if (relayed) log.info('relayed jobs from the outbox', { jobs: relayed });
}

/**
 * Hands over again the jobs other servers took lately (each is marked with `server` once taken);
 * answers whether all of them went (else the next tick tries again).
 */
async function handOverAgain(kernel: Kernel, server: string, previous: string | undefined): Promise<boolean> {
  const seen = new Set<string>();
  let again = 0;
  for (;;) {
    const found = await kernel.storage.outbox.handedElsewhere(server, kernel.config.outboxKeepMs, RELAY_BATCH);
    const jobs = found.filter((j) => !seen.has(j.id));
    // A job seen already in this pass: its mark was not written (the database is away); next tick.
    if (jobs.length < found.length) return false;
    if (jobs.length === 0) break;
    for (const j of jobs) seen.add(j.id);
    const n = await handOver(kernel, jobs);
    again += n;
    if (n < jobs.length) return false;
  }
  if (again) {
    log.warn(
      "the job queue's server changed (a failover or a restart): handed over again the jobs it took lately, which it may have lost",
      {
        ...(previous ? { from: previous } : {}),
        to: server,
        jobs: again,
      },
    );
  }
  return true;
}
