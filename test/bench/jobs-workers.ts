import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import type { Kernel } from '../../core/kernel.ts';
import { track } from './jobs-cleanup.ts';
import type { WorkerProfile } from './jobs-profiled-worker.ts';

/**
 * Worker processes for the jobs benchmark: `bun app/worker.ts` exactly as deployed, or the
 * profiled twin (test/bench/jobs-profiled-worker.ts) that times each step of a job.
 */

const ROOT = resolve(import.meta.dir, '../..');
const PROFILED = resolve(import.meta.dir, 'jobs-profiled-worker.ts');

export interface WorkerSet {
  pids: number[];
  /** True once any of the workers has exited. */
  exited(): boolean;
  /** The profiled workers' step timings (empty for plain workers). */
  profiles(): Promise<WorkerProfile[]>;
  /** The last lines each worker wrote to stderr (for errors). */
  stderrTail(): string;
  stop(): Promise<void>;
}

export async function startWorkers(
  kernel: Kernel,
  count: number,
  env: Record<string, string>,
  options: { profiled: boolean },
): Promise<WorkerSet> {
  const before = new Set((await kernel.statsBoard.all()).map((s) => s.workerId));
  const tails: string[][] = [];
  const pending = new Map<number, (p: WorkerProfile) => void>();
  const procs: Subprocess[] = [];
  for (let i = 0; i < count; i++) {
    const tail: string[] = [];
    tails.push(tail);
    // BENCH_JOBS_CPU_PROF=<dir>: the profiled workers also write a CPU profile (markdown) there on exit.
    const cpuProf = process.env.BENCH_JOBS_CPU_PROF ? ['--cpu-prof-md', `--cpu-prof-dir=${resolve(process.env.BENCH_JOBS_CPU_PROF)}`] : [];
    const cmd = options.profiled ? ['bun', ...cpuProf, PROFILED] : ['bun', 'app/worker.ts'];
    const proc = track(
      Bun.spawn(cmd, {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdout: 'ignore',
        stderr: 'pipe',
        ...(options.profiled ? { ipc: (message: unknown) => pending.get(i)?.(message as WorkerProfile) } : {}),
      }),
    );
    procs.push(proc);
    void collect(proc.stderr as ReadableStream<Uint8Array>, tail);
  }
  const set: WorkerSet = {
    pids: procs.map((p) => p.pid),
    exited: () => procs.some((p) => p.exitCode !== null || p.signalCode !== null),
    async profiles() {
      if (!options.profiled) return [];
      return Promise.all(
        procs.map(
          (p, i) =>
            new Promise<WorkerProfile>((resolveProfile, reject) => {
              const timer = setTimeout(() => reject(new Error(`worker ${p.pid} did not send its profile`)), 10_000);
              pending.set(i, (profile) => {
                clearTimeout(timer);
                resolveProfile(profile);
              });
              p.send('profile');
            }),
        ),
      );
    },
    stderrTail: () => tails.map((t, i) => `worker ${procs[i]?.pid}:\n${t.join('')}`).join('\n'),
    async stop() {
      for (const p of procs) p.kill('SIGTERM');
      await Promise.race([Promise.all(procs.map((p) => p.exited)), Bun.sleep(15_000)]);
      for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
      await Promise.all(procs.map((p) => p.exited));
    },
  };
  // Ready once every new worker has published its counters (startWorkers does so as it starts consuming).
  const deadline = Date.now() + 30_000;
  for (;;) {
    const exited = procs.find((p) => p.exitCode !== null);
    if (exited) {
      await set.stop();
      throw new Error(`worker ${exited.pid} exited with code ${exited.exitCode}\n${set.stderrTail()}`);
    }
    const fresh = (await kernel.statsBoard.all()).filter((s) => !before.has(s.workerId));
    if (fresh.length >= count) break;
    if (Date.now() > deadline) {
      await set.stop();
      throw new Error(`workers did not start within 30 s\n${set.stderrTail()}`);
    }
    await Bun.sleep(100);
  }
  await Bun.sleep(300); // their first XREADGROUP is on its way
  return set;
}

/** Keeps the last ~40 lines of a stream (a worker's stderr), so a failure can show them. */
async function collect(stream: ReadableStream<Uint8Array>, tail: string[]): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    tail.push(decoder.decode(chunk));
    if (tail.length > 40) tail.splice(0, tail.length - 40);
  }
}
