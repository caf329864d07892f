/**
 * Calls a request over and over, one at a time, while something heavy runs in the service, and
 * keeps each call's latency: "one tenant must never stall the others" as a number (p99).
 */
export interface LatencyProbe {
  /** Stops calling and answers the latencies (ms) of the calls made. */
  stop(): Promise<number[]>;
}

export function probeLatency(call: () => Promise<{ status: number }>): LatencyProbe {
  const samples: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      const { status } = await call();
      // A fast refusal (429) would flatter the figures: every call must be a real answer.
      if (status !== 200) throw new Error(`probe call answered ${status}`);
      samples.push(performance.now() - t0);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** Nearest-rank percentile (ms). */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}
