import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';

/** Runs older than this are forgotten; a cell still queued by one then runs without its limits. */
const RUN_LIFETIME_MS = 30 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
let prunedAt = 0;
/** How long a key's uncapped calls share a run: far inside RUN_LIFETIME_MS. */
const SHARED_RUN_MS = 3600_000;
/** Per kernel (its database): the shared run of each workspace's key. */
const sharedRuns = new WeakMap<Kernel, Map<string, { id: Promise<string>; until: number }>>();

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
  if (limits.cap !== undefined || !limits.keyId) return kernel.storage.credits.createRun(workspaceId, limits);
  // A key's uncapped calls share one run for a while: it carries only the key (whose monthly cap
  // bounds them all alike), and single-row inserts of one run are written together (insert lanes)
  // instead of each paying a run record and a commit of its own.
  const shared = sharedRuns.get(kernel) ?? new Map<string, { id: Promise<string>; until: number }>();
  sharedRuns.set(kernel, shared);
  const key = `${workspaceId}:${limits.keyId}`;
  const known = shared.get(key);
  if (known && known.until > now) return known.id;
  const id = kernel.storage.credits.createRun(workspaceId, limits);
  const entry = { id, until: now + SHARED_RUN_MS };
  shared.set(key, entry);
  id.catch(() => {
    if (shared.get(key) === entry) shared.delete(key);
  });
  return id;
}
