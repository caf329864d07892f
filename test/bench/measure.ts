/** Timing helpers: latency percentiles of a sequential call, and throughput under concurrency. */

export interface Latency {
  samples: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

/** Nearest-rank percentile of sorted values (ms). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(times: number[]): Latency {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    samples: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

export interface LatencyBudget {
  /** Stop sampling once this much time is spent (and at least `minSamples` are in). */
  budgetMs: number;
  minSamples: number;
}

/**
 * Runs `call` up to `warmup` times untimed (at most a quarter of the budget, at least twice), then
 * up to `samples` times one after another; a slow call gets fewer samples, never under `minSamples`.
 */
export async function latency(
  call: () => Promise<unknown>,
  samples: number,
  warmup: number,
  budget?: LatencyBudget,
  /** Runs before every call (warm-up and timed), outside the timing. */
  before?: () => Promise<unknown>,
): Promise<Latency> {
  const budgetMs = budget?.budgetMs ?? Infinity;
  const minSamples = Math.min(samples, budget?.minSamples ?? samples);
  const warmEnd = performance.now() + budgetMs / 4;
  for (let i = 0; i < warmup && (i < 2 || performance.now() < warmEnd); i++) {
    await before?.();
    await call();
  }
  const times: number[] = [];
  const deadline = performance.now() + budgetMs;
  for (let i = 0; i < samples; i++) {
    if (times.length >= minSamples && performance.now() > deadline) break;
    await before?.();
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return summarize(times);
}

export interface Throughput {
  concurrency: number;
  seconds: number;
  ok: number;
  failed: number;
  perSecond: number;
  latency: Latency;
  firstError?: string;
}

/**
 * `concurrency` loops call `call(n)` (n counts up across loops) until `seconds` have passed.
 * A call that throws counts as failed; the first error message is kept.
 */
export async function throughput(call: (n: number) => Promise<void>, concurrency: number, seconds: number): Promise<Throughput> {
  const times: number[] = [];
  let n = 0;
  let failed = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const end = start + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await call(n++);
        times.push(performance.now() - t0);
      } catch (e) {
        failed++;
        firstError ??= (e as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - start) / 1000;
  return {
    concurrency,
    seconds: elapsed,
    ok: times.length,
    failed,
    perSecond: times.length / elapsed,
    latency: summarize(times),
    firstError,
  };
}

/** Wall-clock ms of one awaited call, with its result. */
export async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await call();
  return { ms: performance.now() - t0, value };
}
