import type { BenchTool, FillResult } from './jobs-fill.ts';
import type { WorkerProfile } from './jobs-profiled-worker.ts';
import type { StepReplay } from './jobs-steps.ts';
import type { BaselineResult } from './queue-baselines.ts';
import type { SeedResult } from './seed.ts';

/** The jobs benchmark's markdown (for the README) and JSON. */

export const JOB_TARGETS = { cellsPerSecond: 5_000, vsBullmq: 1.5 } as const;

export interface JobsSettings {
  rows: number;
  workers: number;
  workerConcurrency: number;
  tools: BenchTool[];
  stepRows: number;
  extraToolColumns: number;
  seedBatch: number;
  seedConcurrency: number;
  pollMs: number;
  streamsCount: number;
  bullmqConcurrency: number;
  profile: 'auto' | 'always' | 'never';
  timeoutSeconds: number;
}

export interface JobsReport {
  startedAt: string;
  seconds: number;
  settings: JobsSettings;
  machine: { commit: string; bun: string; platform: string; cpus: number; mariadb: string; redis: string; bullmq: string };
  seed: SeedResult;
  /** One fill per tool with plain `bun app/worker.ts` (the first is the headline), then the timed one when it ran. */
  fills: FillResult[];
  steps?: StepReplay;
  baselines: BaselineResult[];
  verdict: { cellsPerSecond: number; bullmqJobsPerSecond: number; ratio: number; meetsRate: boolean; meetsRatio: boolean };
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const s2 = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2));
const mark = (ok: boolean) => (ok ? '✅' : '❌');

export function verdict(fill: FillResult, baselines: BaselineResult[]): JobsReport['verdict'] {
  const bull = baselines.find((b) => b.system === 'bullmq' && b.jobs === fill.rows);
  const bullmqJobsPerSecond = bull?.jobsPerSecond ?? Number.NaN;
  const ratio = fill.cellsPerSecond / bullmqJobsPerSecond;
  return {
    cellsPerSecond: fill.cellsPerSecond,
    bullmqJobsPerSecond,
    ratio,
    meetsRate: fill.cellsPerSecond >= JOB_TARGETS.cellsPerSecond,
    meetsRatio: ratio >= JOB_TARGETS.vsBullmq,
  };
}

function baselineRow(b: BaselineResult): string {
  const what =
    b.system === 'bullmq'
      ? `BullMQ no-op jobs: addBulk, ${b.consumers} Worker processes × concurrency ${b.perConsumer}`
      : `Bare Redis Streams: XADD, ${b.consumers} consumer processes XREADGROUP COUNT ${b.perConsumer} + XACK`;
  return `| ${what} | ${int(b.jobs)} | — | ${s2(b.seconds)} | ${int(b.jobsPerSecond)} jobs/s |`;
}

function profileTable(profiles: WorkerProfile[]): string[] {
  const names = [...new Set(profiles.flatMap((p) => Object.keys(p.steps)))];
  const total = (name: string) => profiles.reduce((a, p) => a + (p.steps[name]?.ms ?? 0), 0);
  const calls = (name: string) => profiles.reduce((a, p) => a + (p.steps[name]?.calls ?? 0), 0);
  const handler = total('job handler (all of the above)');
  const out = ['| Step (both workers) | Calls | Mean ms | Max ms | Share of handler time |', '|---|---:|---:|---:|---:|'];
  for (const name of names.sort((a, b) => total(b) - total(a))) {
    const max = Math.max(...profiles.map((p) => p.steps[name]?.maxMs ?? 0));
    const share = name.startsWith('redis') ? '' : `${((total(name) / handler) * 100).toFixed(0)}%`;
    out.push(`| ${name} | ${int(calls(name))} | ${s2(total(name) / Math.max(1, calls(name)))} | ${int(max)} | ${share} |`);
  }
  return out;
}

function cpuLine(f: FillResult): string {
  const parts = Object.entries(f.cpu.perProcess).map(([name, s]) => `${name} ${s.toFixed(1)} s`);
  const d = f.db;
  return (
    `CPU during the fill (${s2(f.seconds)} s wall, 2 cores = ${(f.seconds * 2).toFixed(1)} CPU-s): ${parts.join(', ')}, other processes ${f.cpu.others.toFixed(1)} s, taken by the VM host (steal) ${f.cpu.steal.toFixed(1)} s; machine ${(f.cpu.machineBusy * 100).toFixed(0)}% busy. ` +
    `MariaDB: ${int(d.Questions)} statements, ${int(d.Innodb_data_fsyncs)} fsyncs, ${int(d.Innodb_row_lock_waits)} row lock waits totalling ${s2(d.Innodb_row_lock_time / 1000)} s.`
  );
}

function stepTable(r: StepReplay, cpus: number): string[] {
  const out = [
    `| Step of one job (${r.rowsPerJob} rows), replayed alone | Wall ms | JS CPU ms (Kysely, mysql2, JSON, tool) | MariaDB CPU ms |`,
    '|---|---:|---:|---:|',
  ];
  const sum = { wall: 0, js: 0, db: 0 };
  for (const st of r.steps) {
    out.push(`| ${st.step} | ${st.wallMs.toFixed(1)} | ${st.jsCpuMs.toFixed(1)} | ${st.dbCpuMs.toFixed(1)} |`);
    sum.wall += st.wallMs;
    sum.js += st.jsCpuMs;
    sum.db += st.dbCpuMs;
  }
  out.push(`| **per job** | **${sum.wall.toFixed(1)}** | **${sum.js.toFixed(1)}** | **${sum.db.toFixed(1)}** |`);
  const cpuPerCell = (sum.js + sum.db) / r.rowsPerJob / 1000;
  out.push(
    '',
    `Averages over ${r.jobs} jobs of \`${r.tool}\`, run one after another in the bench process (no queue; MariaDB CPU from /proc, 10 ms ticks). ` +
      `At ${(((sum.js + sum.db) / r.rowsPerJob) * 1000).toFixed(0)} µs of CPU per cell, ${cpus} fully busy cores cap a fill at about ${int(cpus / cpuPerCell)} cells/s before any queue cost.`,
  );
  return out;
}

/** What the queue itself costs per cell here, beside what a job per cell costs BullMQ with no work at all. */
function queueCostLine(f: FillResult, baselines: BaselineResult[]): string {
  const redis = f.cpu.perProcess['redis-server'] ?? 0;
  const bull = baselines.find((b) => b.system === 'bullmq' && b.jobs === f.rows);
  const us = (seconds: number, n: number) => ((seconds / n) * 1e6).toFixed(seconds / n >= 1e-5 ? 0 : 1);
  const bullPart = bull
    ? `; BullMQ spent ${s2(bull.cpuSeconds)} CPU-s (enqueuer, workers and Redis) on ${int(bull.jobs)} no-op jobs, ${us(bull.cpuSeconds, bull.jobs)} µs per job`
    : '';
  return `- Queue cost: redis-server used ${s2(redis)} CPU-s for the \`${f.tool}\` fill, ${us(redis, f.rows)} µs per cell (${int(f.rowsPerJob)} cells per job)${bullPart}.`;
}

export function jobsMarkdown(r: JobsReport): string {
  const s = r.settings;
  const plain = r.fills.filter((f) => f.profiles.length === 0);
  const main = plain[0] as FillResult;
  const profiled = r.fills.find((f) => f.profiles.length > 0);
  const v = r.verdict;
  const out = [
    `## Job throughput benchmark (${r.startedAt.slice(0, 10)})`,
    '',
    `\`bun run bench:jobs\`: a ${int(s.rows)}-row project (10 input columns) on a throwaway MariaDB ${r.machine.mariadb} (flush each commit, 1 GB buffer pool) and redis-server ${r.machine.redis}; ` +
      `a new tool column (0 credits) run with runColumns, ${s.workers} × \`bun app/worker.ts\` at WORKER_CONCURRENCY=${s.workerConcurrency}; BullMQ ${r.machine.bullmq}. ` +
      `Bun ${r.machine.bun}, ${r.machine.platform}, ${r.machine.cpus} CPUs shared by everything; code at ${r.machine.commit}. Whole run ${r.seconds.toFixed(0)} s.`,
    '',
    '| Measure | Jobs | Cells | Seconds | Rate |',
    '|---|---:|---:|---:|---:|',
    ...plain.map(
      (f, i) =>
        `| ${i === 0 ? '**Workflow Service end to end**' : 'Workflow Service end to end'}: \`${f.tool}\` column${f.otherToolColumns ? ` on a project with ${f.otherToolColumns} other tool column${f.otherToolColumns > 1 ? 's' : ''}` : ''}, runColumns → last cell written (polled every ${s.pollMs} ms) | ${int(f.jobs)} | ${int(f.rows)} | ${s2(f.seconds)} | ${i === 0 ? `**${int(f.cellsPerSecond)} cells/s**` : `${int(f.cellsPerSecond)} cells/s`} (${int(f.jobsPerSecond)} jobs/s) |`,
    ),
    ...r.baselines.map(baselineRow),
    '',
    `- ≥ ${int(JOB_TARGETS.cellsPerSecond)} cells/s end to end (\`${main.tool}\`): ${int(v.cellsPerSecond)} ${mark(v.meetsRate)}`,
    `- ≥ ${JOB_TARGETS.vsBullmq}× BullMQ at one job per cell (${int(s.rows)} no-op jobs: the most a BullMQ-per-cell design could do with no work at all): ` +
      `${int(v.cellsPerSecond)} / ${int(v.bullmqJobsPerSecond)} = ${v.ratio.toFixed(2)}× ${mark(v.meetsRatio)}`,
    `- Inside runColumns: ${int(main.runColumns.ms)} ms (${int(main.rows)} cells pending → queued in one transaction ${int(main.runColumns.claimMs)} ms, then ${int(main.jobs)} XADDs one by one ${int(main.runColumns.enqueueMs)} ms); first job done after ${int(main.firstJobMs)} ms.`,
    queueCostLine(main, r.baselines),
    ...plain.map((f) => `- \`${f.tool}\`: ${cpuLine(f)}`),
    `- Seeded ${int(r.seed.rows)} rows in ${s2(r.seed.seconds)} s through RowRepo.insert (batches of ${int(s.seedBatch)}, ${s.seedConcurrency} in flight).`,
  ];
  for (const b of r.baselines) {
    const share = b.otherCpuSeconds / (b.seconds * r.machine.cpus);
    if (share > 0.05 && b.seconds >= 1)
      out.push(
        `> warning: other processes or the VM host took ${(share * 100).toFixed(0)}% of the machine during ${b.system} at ${int(b.jobs)} jobs; its rate is understated.`,
      );
  }
  for (const f of r.fills) {
    const share = f.cpu.others / (f.seconds * r.machine.cpus);
    if (share > 0.05)
      out.push(
        `> warning: other processes took ${(share * 100).toFixed(0)}% of the machine during the \`${f.tool}\` fill (${f.label}); its rate is understated.`,
      );
    const stolen = f.cpu.steal / (f.seconds * r.machine.cpus);
    if (stolen > 0.05)
      out.push(
        `> warning: the VM host took ${(stolen * 100).toFixed(0)}% of the cores (steal) during the \`${f.tool}\` fill (${f.label}); its rate is understated.`,
      );
  }
  if (profiled) {
    const busy = profiled.profiles.reduce((a, p) => a + (p.steps['job handler (all of the above)']?.ms ?? 0), 0) / 1000;
    const capacity = profiled.profiles.reduce((a, p) => a + (p.concurrency * (p.lastEnd - p.firstStart)) / 1000, 0);
    out.push(
      '',
      `### Where a job's time goes`,
      '',
      `A fill of \`${profiled.tool}\` with timed workers (test/bench/jobs-profiled-worker.ts, same code with timers): ${int(profiled.cellsPerSecond)} cells/s.`,
      '',
      ...profileTable(profiled.profiles),
      '',
      `Job slots busy ${((busy / capacity) * 100).toFixed(0)}% of the time (handler seconds ${busy.toFixed(1)} / slot seconds ${capacity.toFixed(1)}); ` +
        `step times are wall time, so they include waiting for the worker's event loop and the pool. ${cpuLine(profiled)}`,
    );
  }
  if (r.steps) out.push('', ...stepTable(r.steps, r.machine.cpus));
  return out.join('\n');
}
