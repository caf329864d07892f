import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { SqlStorage } from '../../adapters/storage/sql-storage.ts';
import { loadConfig } from '../../core/config.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Project } from '../../core/model.ts';
import { createColumn } from '../../core/services/columns.ts';
import { setLogLevel } from '../../core/log.ts';
import { createKernel } from '../../app/service.ts';
import { createDatabase, startMariaDb } from '../support/mariadb.ts';
import { freshPrefix, startRedis } from '../support/redis.ts';
import { CleanupSteps, killChildren } from './jobs-cleanup.ts';
import { BENCH_TOOLS, type BenchTool, type FillResult, fillColumn, jobRowsFor } from './jobs-fill.ts';
import { JOB_TARGETS, type JobsReport, type JobsSettings, jobsMarkdown, verdict } from './jobs-report.ts';
import { replaySteps } from './jobs-steps.ts';
import { startWorkers } from './jobs-workers.ts';
import { findPid } from './proc-cpu.ts';
import { type BaselineResult, runBaseline } from './queue-baselines.ts';
import { createBenchProject, seedRows } from './seed.ts';

/**
 * `bun run bench:jobs`: how fast a tool column fills end to end on MariaDB + Redis with worker
 * processes, beside what bare Redis Streams and BullMQ do with no-op jobs on the same Redis.
 * Prints a markdown table (progress on stderr) and writes .bench/jobs-results.json.
 *
 * Knobs (env): BENCH_JOBS_ROWS=100000  BENCH_JOBS_WORKERS=2  BENCH_JOBS_CONCURRENCY=8 (WORKER_CONCURRENCY)
 * BENCH_JOBS_TOOLS=formula,domain_normalizer (one fill each, each on a fresh project; the first is the headline)
 * BENCH_JOBS_OTHER_TOOL_COLUMNS=2 (the first tool once more on a project with that many other tool columns; 0 = skip)
 * BENCH_JOBS_STREAMS_COUNT=50  BENCH_JOBS_BULLMQ_CONCURRENCY=50
 * BENCH_JOBS_PROFILE=auto|always|never (auto = when under target): a fill with timed workers, then
 * the steps of BENCH_JOBS_STEP_ROWS=20000 rows' jobs replayed one at a time (JS vs MariaDB CPU per step).
 * BENCH_JOBS_CPU_PROF=<dir> (the timed workers also write a Bun CPU profile, markdown, there).
 */

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

const profile = process.env.BENCH_JOBS_PROFILE ?? 'auto';
if (!['auto', 'always', 'never'].includes(profile)) throw new Error(`BENCH_JOBS_PROFILE must be auto, always or never, got "${profile}"`);

const tools = (process.env.BENCH_JOBS_TOOLS ?? 'formula,domain_normalizer').split(',').map((t) => t.trim()) as BenchTool[];
for (const t of tools)
  if (!(t in BENCH_TOOLS)) throw new Error(`BENCH_JOBS_TOOLS: unknown tool "${t}" (${Object.keys(BENCH_TOOLS).join(', ')})`);

const settings: JobsSettings = {
  rows: num('BENCH_JOBS_ROWS', 100_000),
  workers: num('BENCH_JOBS_WORKERS', 2),
  workerConcurrency: num('BENCH_JOBS_CONCURRENCY', 8),
  tools,
  stepRows: num('BENCH_JOBS_STEP_ROWS', 20_000),
  extraToolColumns: Number(process.env.BENCH_JOBS_OTHER_TOOL_COLUMNS ?? 2),
  seedBatch: 2_000,
  seedConcurrency: 4,
  pollMs: 20,
  streamsCount: num('BENCH_JOBS_STREAMS_COUNT', 50),
  bullmqConcurrency: num('BENCH_JOBS_BULLMQ_CONCURRENCY', 50),
  profile: profile as JobsSettings['profile'],
  timeoutSeconds: 600,
};

const RESULTS = resolve(import.meta.dir, '../../.bench/jobs-results.json');
const cleanup = new CleanupSteps();
cleanup.add(() => killChildren());

// A signal often arrives twice (to the process group, and forwarded by `bun run`): only one that
// comes well after the first cuts the clean-up short.
let interruptedAt = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interruptedAt) {
      if (Date.now() - interruptedAt > 3_000) process.exit(130);
      return;
    }
    interruptedAt = Date.now();
    process.stderr.write(`\n${signal}: stopping workers, Redis and MariaDB…\n`);
    void cleanup.run().finally(() => process.exit(130));
  });
}

const progress = (line: string) => process.stderr.write(`${line}\n`);
const version = (cmd: string[], pattern: RegExp) => Bun.spawnSync(cmd).stdout.toString().match(pattern)?.[1] ?? '?';
const portOf = (url: string) => new URL(url).port;
/** The code measured: HEAD, marked dirty when core/, adapters/ or plugins/ have uncommitted changes. */
function codeVersion(): string {
  const head =
    Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: import.meta.dir })
      .stdout.toString()
      .trim() || 'unknown';
  const dirty = Bun.spawnSync(['git', 'status', '--porcelain', '--', 'core', 'adapters', 'plugins'], {
    cwd: resolve(import.meta.dir, '../..'),
  })
    .stdout.toString()
    .trim();
  return dirty ? `${head} + uncommitted changes` : head;
}

async function closeKernel(kernel: Kernel): Promise<void> {
  await kernel.queue.close();
  await kernel.rateLimiter.close();
  await kernel.statsBoard.close();
  await kernel.storage.close();
}

async function main(): Promise<void> {
  setLogLevel('warn');
  const startedAt = new Date();
  const commit = codeVersion();

  progress('starting redis-server and mariadbd…');
  const redis = await startRedis();
  cleanup.add(() => redis.stop());
  const mariadb = await startMariaDb({ flushEachCommit: true, bufferPoolMb: 1024 });
  cleanup.add(() => mariadb.stop());
  const env = {
    DATABASE_URL: await createDatabase(mariadb.url, `jobs_bench_${process.pid}`),
    REDIS_URL: redis.url,
    JOB_QUEUE_PREFIX: freshPrefix('jobs-bench'),
    WORKER_CONCURRENCY: String(settings.workerConcurrency),
    PROVIDER_MODE: 'sandbox',
    LOG_LEVEL: 'warn',
  };
  const kernel = await createKernel(loadConfig(env));
  cleanup.add(() => closeKernel(kernel));
  // The headline fill's job count: the service sizes jobs by the tool's batch (enrichJobRows).
  const jobs = Math.ceil(settings.rows / jobRowsFor(kernel, settings.tools[0] as BenchTool));

  // The queue alone first, while MariaDB is idle.
  const redisPid = redis.owned ? findPid(['redis-server', `:${portOf(redis.url)}`]) : undefined;
  const baselines: BaselineResult[] = [];
  for (const n of [...new Set([jobs, settings.rows])]) {
    for (const system of ['redis-streams', 'bullmq'] as const) {
      const perConsumer = system === 'bullmq' ? settings.bullmqConcurrency : settings.streamsCount;
      const b = await runBaseline(system, redis.url, freshPrefix(`base-${system}`), {
        jobs: n,
        cells: settings.rows,
        consumers: settings.workers,
        perConsumer,
        timeoutSeconds: settings.timeoutSeconds,
        redisPid,
      });
      progress(`${system}, ${n} no-op jobs: ${b.seconds.toFixed(2)} s, ${Math.round(b.jobsPerSecond)} jobs/s`);
      baselines.push(b);
    }
  }

  const storage = kernel.storage as SqlStorage;
  const ws = await storage.workspaces.create({ name: 'jobs bench', plan: 'pro' });
  // Each fill gets a project of its own, so none reads the tool columns of an earlier one
  // (the runner reads every other tool column's cells); one fill adds such columns on purpose.
  let seed: JobsReport['seed'] | undefined;
  const seedProject = async (name: string, rows: number) => {
    const { project, columns } = await createBenchProject(storage, ws.id, name);
    progress(`seeding ${rows} rows (${name})…`);
    const s = await seedRows(storage, project.pk, columns, 1, rows, {
      batch: settings.seedBatch,
      concurrency: settings.seedConcurrency,
      label: 'seed',
    });
    progress(`seeded in ${s.seconds.toFixed(1)} s`);
    seed ??= s;
    return project;
  };

  const serverPids = {
    mariadbd: findPid(['mariadbd', `--port=${portOf(mariadb.url)}`]),
    'redis-server': redisPid,
  };
  const fills: FillResult[] = [];
  const fill = async (label: string, project: Project, tool: BenchTool, column: string, profiled: boolean) => {
    const workers = await startWorkers(kernel, settings.workers, env, { profiled });
    try {
      progress(`${label}: filling ${settings.rows} cells with ${settings.workers} workers × ${settings.workerConcurrency}…`);
      const f = await fillColumn(kernel, project, settings.rows, workers, {
        label,
        tool,
        column,
        concurrency: settings.workerConcurrency,
        pollMs: settings.pollMs,
        timeoutSeconds: settings.timeoutSeconds,
        serverPids,
      });
      progress(`${label}: ${f.seconds.toFixed(2)} s, ${Math.round(f.cellsPerSecond)} cells/s`);
      fills.push(f);
    } finally {
      await workers.stop();
    }
  };
  const projects = new Map<BenchTool, Project>();
  for (const tool of settings.tools) {
    const project = await seedProject(`jobs bench ${tool}`, settings.rows);
    projects.set(tool, project);
    await fill(`app/worker.ts, ${tool}`, project, tool, `bench ${tool}`, false);
  }
  const first = fills[0] as FillResult;
  if (settings.extraToolColumns > 0) {
    // The first tool again, on its project (which has its filled column) plus more tool columns added, not run.
    const project = projects.get(first.tool) as Project;
    for (let i = 1; i < settings.extraToolColumns; i++) {
      await createColumn(kernel, project, { name: `idle ${i}`, tool_id: first.tool, config: { ...BENCH_TOOLS[first.tool].config } });
    }
    await fill(
      `app/worker.ts, ${first.tool}, ${settings.extraToolColumns} other tool columns`,
      project,
      first.tool,
      `again ${first.tool}`,
      false,
    );
  }
  let steps: JobsReport['steps'];
  if (settings.profile === 'always' || (settings.profile === 'auto' && first.cellsPerSecond < JOB_TARGETS.cellsPerSecond)) {
    await fill(
      `timed workers, ${first.tool}`,
      await seedProject(`jobs bench timed ${first.tool}`, settings.rows),
      first.tool,
      `timed ${first.tool}`,
      true,
    );
    const stepRows = Math.min(settings.stepRows, settings.rows);
    const project = await seedProject(`jobs bench steps ${first.tool}`, stepRows);
    progress(`replaying the jobs of ${stepRows} rows step by step…`);
    steps = await replaySteps(kernel, project, {
      tool: first.tool,
      rows: stepRows,
      column: `steps ${first.tool}`,
      mariadbPid: serverPids.mariadbd,
    });
  }

  const report: JobsReport = {
    startedAt: startedAt.toISOString(),
    seconds: (Date.now() - startedAt.getTime()) / 1000,
    settings,
    machine: {
      commit,
      bun: Bun.version,
      platform: `${process.platform}-${process.arch}`,
      cpus: cpus().length,
      mariadb: version(['mariadbd', '--version'], /Ver (\S+?)-/),
      redis: version(['redis-server', '--version'], /v=(\S+)/),
      bullmq: (JSON.parse(readFileSync(resolve(import.meta.dir, '../../node_modules/bullmq/package.json'), 'utf8')) as { version: string })
        .version,
    },
    seed: seed as JobsReport['seed'],
    fills,
    steps,
    baselines,
    verdict: verdict(first, baselines),
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${jobsMarkdown(report)}\n\nJSON: ${RESULTS}\n`);
}

let failed = false;
try {
  await main();
} catch (e) {
  failed = true;
  process.stderr.write(`bench:jobs failed: ${(e as Error).stack ?? String(e)}\n`);
} finally {
  await cleanup.run();
}
process.exit(failed ? 1 : 0);
