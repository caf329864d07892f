/**
 * Maps over a batch with at most `limit` calls in flight, answering the results in input order.
 * Tools that make one request per row use it so a batch is neither serial (slow) nor a burst
 * that trips a provider's rate limit. The first thrown error stops new calls and rejects: a thrown
 * error means the whole batch failed (see rowFailure in core/plugins/provider-http.ts).
 */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i] as T, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
