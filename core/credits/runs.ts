import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';

/** Runs older than this are forgotten; a cell still queued by one then runs without its limits. */
const RUN_LIFETIME_MS = 30 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
let prunedAt = 0;

/**
 * The run of a call that queues tool cells (docs/enrichment.md), when it has limits to keep:
 * a `max_credits` cap, or the API key it came with (whose monthly cap, now or set later this month,
 * bounds its charges). Its id goes with the cells (`cell_keys.run_id`), so every job that charges
 * them — the first, a follow-up, a retry, a resume after a restart — spends as the call allowed.
 */
export async function startRun(kernel: Kernel, workspaceId: string, limits: { cap?: number; keyId?: string }): Promise<string | undefined> {
  if (limits.cap === undefined && !limits.keyId) return undefined;
  const now = Date.now();
  if (now - prunedAt > PRUNE_EVERY_MS) {
    prunedAt = now;
    void kernel.storage.credits
      .pruneRuns(now - RUN_LIFETIME_MS)
      .catch((e) => log.warn('could not prune old runs', { error: (e as Error).message }));
  }
  return kernel.storage.credits.createRun(workspaceId, limits);
}
