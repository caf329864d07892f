import type { Kernel } from '../../kernel.ts';
import type { AnyTool } from '../../plugins/plugin-types.ts';
import type { ReadyRow, Settled } from './enrich-batch.ts';

/** The cache key of a result: per workspace (results may hold its data), mode and tool version. */
export function cacheKeyOf(workspaceId: string, mode: string, tool: AnyTool, key: string): string {
  return `${workspaceId}:${mode}:${tool.id}@${tool.version}:${key}`;
}

/**
 * Step 5, cache: a result already paid for (same cache key, not expired) is reused, `completed` and
 * free. Answers the rows still to run, and each row's cache key (to store what it finds).
 */
export async function reuseCached(
  kernel: Kernel,
  workspaceId: string,
  tool: AnyTool,
  ready: ReadyRow[],
  settled: Settled,
): Promise<{ ready: ReadyRow[]; keys: Map<number, string> }> {
  const keys = new Map<number, string>();
  if (!tool.cacheKey || ready.length === 0) return { ready, keys };
  for (const r of ready) {
    const k = tool.cacheKey(r.item);
    if (k) keys.set(r.row.seq, cacheKeyOf(workspaceId, kernel.config.providerMode, tool, k));
  }
  const hits = await kernel.storage.cache.getMany([...new Set(keys.values())]);
  const left = ready.filter((r) => {
    const key = keys.get(r.row.seq);
    if (key === undefined || !hits.has(key)) return true;
    settled.set(r.row.seq, { v: hits.get(key), s: 'completed' });
    return false;
  });
  return { ready: left, keys };
}
