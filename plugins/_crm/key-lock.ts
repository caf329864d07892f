/**
 * Runs work for one upsert key at a time in this process. Two rows with the same key (a people
 * table synced as companies: many rows, one domain) would otherwise both find no record and both
 * create one. Other processes are not covered: the CRM's own unique keys are (README of each tool).
 */
const tails = new Map<string, Promise<unknown>>();

export function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(work);
  const tail = run.catch(() => {});
  tails.set(key, tail);
  // The last one out removes the entry, so the map holds only keys in flight.
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
