/** Polls `what` every 50 ms until it answers something (not undefined or false), or `ms` pass (an error). */
export async function until<T>(what: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await Bun.sleep(50);
  }
}
