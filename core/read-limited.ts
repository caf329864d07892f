/**
 * A body (a request's or a response's) read whole, up to `maxBytes`: null when it is longer (or
 * says it is: `declared`, its Content-Length), the rest cancelled — or, with `cut`, its first
 * `maxBytes`. Answers never hold more than the limit, whatever the sender streams.
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  options: { declared?: string | null; past?: 'fail' | 'cut' } = {},
): Promise<Uint8Array | null> {
  const past = options.past ?? 'fail';
  const declared = Number(options.declared ?? Number.NaN);
  if (past === 'fail' && Number.isFinite(declared) && declared > maxBytes) {
    await body?.cancel().catch(() => {});
    return null;
  }
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      if (past === 'fail') return null;
      parts.push(value.subarray(0, value.byteLength - (total - maxBytes)));
      break;
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}
