/**
 * Lets other work of this process (requests above all) run before a job's next round. A job's
 * rounds are chains of promises and on SQLite every call in them is synchronous, so without a
 * break a long run would hold the process from its first round to its last. A 1 ms timer rather
 * than setImmediate: a request needs a few turns of the event loop, and with setImmediate each of
 * them waited for one more round (GET /projects beside a 100,000-row CSV import on SQLite: p50
 * 18 → 12 ms, p99 85 → 60 ms; beside an ICP score run, p50 7 → 2.4 ms), for ~1 s more per
 * 1,000 rounds.
 */
export const breathe = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 1));
