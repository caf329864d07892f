import { loadConfig } from '../../core/config.ts';
import type { JobHandler, JobHandlers } from '../../core/ports/queue.ts';
import type { Kernel } from '../../core/kernel.ts';
import { log } from '../../core/log.ts';
import { createKernel, startWorkers } from '../../app/service.ts';

/**
 * `bun app/worker.ts` with timers: the same kernel and handlers, but the storage calls a job makes,
 * the tool's enrich, the job handler and the queue's Redis commands are wrapped to add up their
 * wall time. The bench asks for the figures over IPC ("profile") and then stops the process.
 */

export interface Step {
  calls: number;
  /** Summed wall time of the calls (ms); overlapping calls of concurrent jobs each count. */
  ms: number;
  maxMs: number;
}

export interface WorkerProfile {
  pid: number;
  concurrency: number;
  jobs: number;
  /** Wall clock (ms since epoch) of the first handler start and the last handler end. */
  firstStart: number;
  lastEnd: number;
  /** CPU seconds (user + system) this process used between the first job and the report. */
  cpuSeconds: number;
  steps: Record<string, Step>;
}

const steps: Record<string, Step> = {};
const profile: WorkerProfile = { pid: process.pid, concurrency: 0, jobs: 0, firstStart: 0, lastEnd: 0, cpuSeconds: 0, steps };
let cpuAtFirstJob: NodeJS.CpuUsage | undefined;

function add(name: string, ms: number): void {
  steps[name] ??= { calls: 0, ms: 0, maxMs: 0 };
  const s = steps[name];
  s.calls++;
  s.ms += ms;
  s.maxMs = Math.max(s.maxMs, ms);
}

async function timed<T>(name: string, call: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await call();
  } finally {
    add(name, performance.now() - t0);
  }
}

/** Replaces `obj[method]` by a timed version of itself. */
function wrap<O extends object>(obj: O, method: keyof O & string, name: string): void {
  const original = obj[method] as unknown as (...args: unknown[]) => Promise<unknown>;
  (obj as Record<string, unknown>)[method] = (...args: unknown[]) => timed(name, () => original.apply(obj, args));
}

/** Times the queue's own Redis round trips (ioredis `call`), by command; EVALSHA = the settle/heartbeat scripts. */
function wrapRedis(conn: unknown, label: string): void {
  const c = conn as { call?: (...args: unknown[]) => Promise<unknown> } | undefined;
  if (!c?.call) return;
  const original = c.call;
  c.call = (...args: unknown[]) => timed(`redis ${label} ${String(args[0])}`, () => original.apply(c, args));
}

function instrument(kernel: Kernel): void {
  const { projects, rows } = kernel.storage;
  wrap(projects, 'getByPk', 'project + columns (getByPk, columns)');
  wrap(projects, 'columns', 'project + columns (getByPk, columns)');
  wrap(rows, 'moveHeld', 'claim cells (moveHeld)');
  wrap(rows, 'moveStatus', 'move cells (moveStatus)');
  wrap(rows, 'getMany', 'read rows (getMany)');
  wrap(rows, 'writeCells', 'write cells (writeCells)');
  for (const tool of kernel.plugins.listTools()) wrap(tool, 'enrich', 'tool.enrich');
  const queue = kernel.queue as unknown as { cmd?: unknown; consume: (h: JobHandlers, o: { concurrency: number }) => void };
  wrapRedis(queue.cmd, 'cmd');
  const consume = queue.consume.bind(queue);
  queue.consume = (handlers, options) => {
    profile.concurrency = options.concurrency;
    const timedHandlers: JobHandlers = {};
    for (const [type, reg] of Object.entries(handlers)) {
      const handler: JobHandler = typeof reg === 'function' ? reg : reg.handler;
      const h: JobHandler = async (job, ctx) => {
        const start = Date.now();
        if (profile.jobs === 0 && !cpuAtFirstJob) {
          cpuAtFirstJob = process.cpuUsage();
          profile.firstStart = start;
        }
        try {
          await timed('job handler (all of the above)', () => handler(job, ctx));
        } finally {
          profile.jobs++;
          profile.lastEnd = Date.now();
        }
      };
      timedHandlers[type] = typeof reg === 'function' ? h : { ...reg, handler: h };
    }
    consume(timedHandlers, options);
    // The reader connection exists once consume() ran.
    wrapRedis((queue as unknown as { reader?: unknown }).reader, 'reader');
  };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const kernel = await createKernel(config);
  instrument(kernel);
  startWorkers(kernel);
  log.info('profiled worker started', { worker: kernel.queue.workerId, concurrency: config.workerConcurrency });
  process.on('message', (message) => {
    if (message !== 'profile') return;
    const used = process.cpuUsage(cpuAtFirstJob);
    profile.cpuSeconds = (used.user + used.system) / 1e6;
    process.send?.(profile);
  });
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    await kernel.queue.close();
    await kernel.rateLimiter.close();
    await kernel.statsBoard.close();
    await kernel.storage.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}

main().catch((e) => {
  log.error('profiled worker start-up failed', { error: (e as Error).message });
  process.exit(1);
});
