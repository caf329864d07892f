import type { AnyTool, EnrichResult } from '../../plugins/plugin-types.ts';
import { refundOf } from '../../plugins/tool-price.ts';
import type { ReadyRow, Settled } from '../../columns/enrich-batch.ts';
import type { Refund } from './charge-rows.ts';

/** A result that fills the cell: found, and good enough by the tool's own `isValid`. */
export const isFound = (tool: Pick<AnyTool, 'isValid'>, r: EnrichResult): boolean =>
  r.status === 'ok' && (!tool.isValid || tool.isValid(r.value));

export interface Classified {
  /** Rows a waterfall's next step tries. */
  next: ReadyRow[];
  /** Rows worth another try later (429, 5xx, timeout) while attempts remain. */
  retry: ReadyRow[];
  lastError: string;
  /** The longest wait a retried row's provider asked for (its Retry-After; 0: none): the retry comes no sooner. */
  retryAfterMs: number;
  /** Credits settled rows get back: a per-result tool's that found nothing, a per-unit tool's units not used. */
  refund: Refund[];
  /** Found values to keep under their cache key. */
  toCache: { key: string; value: unknown }[];
  /** Rows whose value this step found. */
  found: number;
}

/**
 * Step 8, classify: what each result means for its cell. Found (and valid) → `completed`; a
 * retryable error while attempts remain → retried; otherwise the last step settles `error` or
 * `no_result`, and an earlier one hands the row to the next step. No I/O: it decides, and writes what it
 * settles into `settled`.
 */
export function classifyResults(
  o: { tool: AnyTool; config: Record<string, unknown>; isLast: boolean; lastAttempt: boolean; cacheKeys: Map<number, string> },
  ready: ReadyRow[],
  results: EnrichResult[],
  settled: Settled,
): Classified {
  const out: Classified = { next: [], retry: [], lastError: '', retryAfterMs: 0, refund: [], toCache: [], found: 0 };
  results.forEach((r, j) => {
    const row = ready[j] as ReadyRow;
    const found = isFound(o.tool, r);
    const retry = r.status === 'error' && r.retryable && !o.lastAttempt;
    const credits = retry ? 0 : refundOf(o.tool, o.config, r, found);
    if (credits > 0) out.refund.push({ row, credits });
    if (retry) {
      // Its charge stays recorded under this job's key, so the retry does not pay again.
      out.retry.push(row);
      out.lastError = r.error;
      out.retryAfterMs = Math.max(out.retryAfterMs, r.retryAfterMs ?? 0);
    } else if (r.status === 'ok' && found) {
      settled.set(row.row.seq, { v: r.value, s: 'completed' });
      out.found++;
      const key = o.cacheKeys.get(row.row.seq);
      if (key) out.toCache.push({ key, value: r.value });
    } else if (o.isLast) {
      settled.set(
        row.row.seq,
        r.status === 'error'
          ? { v: null, s: 'error', e: r.error }
          : { v: null, s: 'no_result', ...(r.status === 'no_result' && r.reason ? { e: r.reason } : {}) },
      );
    } else {
      out.next.push(row);
    }
  });
  return out;
}
