import type { Kernel } from '../kernel.ts';
import type { AnyTool } from '../plugins/plugin-types.ts';
import type { ReadyRow, Settled } from './enrich-batch.ts';

/** The cache key of a result: per workspace (results may hold its data), mode and tool version. */
export function cacheKeyOf(workspaceId: string, mode: string, tool: AnyTool, key: string): string {
  return `${workspaceId}:${mode}:${tool.id}@${tool.version}:${key}`;
}

/**
 * How long a tool's results are reused (ms; 0: not at all): tools that declare a cache key, for
 * ENRICHMENT_CACHE_TTL_S, or less when the tool keeps its results less long (a web page changes).
 */
export function cacheTtlMs(kernel: Kernel, tool: AnyTool): number {
  if (!tool.cacheKey) return 0;
  return Math.min(kernel.config.enrichmentCacheTtlMs, tool.cacheTtlMs ?? Number.POSITIVE_INFINITY);
}

/** Each row's cache key for this tool (rows whose input gives none have none). */
export function cacheKeysOf(kernel: Kernel, workspaceId: string, tool: AnyTool, ready: ReadyRow[]): Map<number, string> {
  const keys = new Map<number, string>();
  if (!tool.cacheKey || cacheTtlMs(kernel, tool) === 0) return keys;
  for (const r of ready) {
    const k = tool.cacheKey(r.item);
    if (k) keys.set(r.row.seq, cacheKeyOf(workspaceId, kernel.config.providerMode, tool, k));
  }
  return keys;
}

/**
 * Step 5, cache: a result already paid for by any project of the workspace (same tool, same input,
 * found within the TTL) is reused, `completed` and free. Answers the rows still to run, each row's
 * cache key (to store what it finds), and when each reused result was found.
 */
export async function reuseCached(
  kernel: Kernel,
  workspaceId: string,
  tool: AnyTool,
  ready: ReadyRow[],
  settled: Settled,
): Promise<{ ready: ReadyRow[]; keys: Map<number, string>; hits: Map<number, number> }> {
  const keys = cacheKeysOf(kernel, workspaceId, tool, ready);
  const hits = new Map<number, number>();
  if (keys.size === 0) return { ready, keys, hits };
  const found = await kernel.storage.cache.getMany([...new Set(keys.values())], Date.now() - cacheTtlMs(kernel, tool));
  const left = ready.filter((r) => {
    const key = keys.get(r.row.seq);
    const hit = key === undefined ? undefined : found.get(key);
    if (!hit) return true;
    settled.set(r.row.seq, { v: hit.value, s: 'completed' });
    hits.set(r.row.seq, hit.fetchedAt ?? Date.now());
    return false;
  });
  return { ready: left, keys, hits };
}
