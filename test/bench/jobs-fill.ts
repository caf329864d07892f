import { sql } from 'kysely';
import type { SqlStorage } from '../../adapters/storage/sql-storage.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Column, Project } from '../../core/model.ts';
import { createColumn, runColumns } from '../../core/services/columns.ts';
import { enrichJobRows } from '../../core/services/row-insert.ts';
import type { WorkerProfile } from './jobs-profiled-worker.ts';
import type { WorkerSet } from './jobs-workers.ts';
import { CpuMeter } from './proc-cpu.ts';

/**
 * One end-to-end fill: a new tool column over every row of the seeded project, run with
 * `runColumns` (as POST /columns/run does) and timed until the last cell is written, with worker
 * processes consuming the Redis stream.
 */

/** The fast built-in tools a fill can use (0 credits, no provider), with the value each should write. */
export const BENCH_TOOLS = {
  formula: { config: { expression: '$uppercase(name)' }, expected: (values: Record<string, unknown>) => String(values.name).toUpperCase() },
  domain_normalizer: { config: { value: '{{domain}}' }, expected: (values: Record<string, unknown>) => String(values.domain) },
} as const;
export type BenchTool = keyof typeof BENCH_TOOLS;

/** Rows per `enrich.batch` job for a column of this tool, as the service sizes them (enrichJobRows). */
export function jobRowsFor(kernel: Kernel, tool: BenchTool): number {
  const planned: Column = {
    no: 0,
    id: 'planned',
    name: tool,
    type: 'tool',
    toolId: tool,
    config: BENCH_TOOLS[tool].config,
    autoRun: false,
    runCondition: null,
    waterfall: null,
    maxCreditsPerRow: null,
    stepOrder: 'listed',
    position: 0,
  };
  return enrichJobRows(kernel, planned);
}
const UNSETTLED = ['pending', 'queued', 'running'];

export interface FillResult {
  label: string;
  tool: BenchTool;
  rows: number;
  /** Rows per `enrich.batch` job (core/services/row-insert.ts enrichJobRows). */
  rowsPerJob: number;
  /** Tool columns of the project besides this one (each job reads their cells too). */
  otherToolColumns: number;
  jobs: number;
  workers: number;
  concurrency: number;
  /**
   * runColumns call → the poll (every pollMs) finds every job acknowledged (a job is acknowledged
   * only after its cells are written) and no unsettled cell. Tool cells keep no write time, so
   * this is up to one poll late.
   */
  seconds: number;
  cellsPerSecond: number;
  jobsPerSecond: number;
  /** Inside runColumns: moving every cell pending → queued (one transaction), then the XADDs; and the whole call. */
  runColumns: { ms: number; claimMs: number; enqueueMs: number };
  /** runColumns call → the poll saw the first job acknowledged. */
  firstJobMs: number;
  statuses: Record<string, number>;
  /** CPU seconds per process during the fill, the machine's busy share (all cores), others' CPU and steal. */
  cpu: { perProcess: Record<string, number>; machineBusy: number; others: number; steal: number };
  /** MariaDB counters over the fill (the bench's own few statements included). */
  db: DbCounters;
  profiles: WorkerProfile[];
}

export interface FillOptions {
  label: string;
  tool: BenchTool;
  column: string;
  concurrency: number;
  pollMs: number;
  timeoutSeconds: number;
  serverPids: Record<string, number | undefined>;
}

/** Counts the calls of one async method of `obj` and sums their ms, live, until `restore()`. */
function spy(obj: object, method: string): { calls: number; ms: number; restore(): void } {
  const target = obj as Record<string, unknown>;
  // The class's own method, not what a wrapper of the object answers: the kernel's storage is a
  // proxy whose replaced methods call the raw repository's, where the spy then sits (no loop).
  const own = Object.hasOwn(obj, method);
  const original = (own ? target[method] : (Object.getPrototypeOf(obj) as Record<string, unknown>)[method]) as (
    ...args: unknown[]
  ) => Promise<unknown>;
  const s = {
    calls: 0,
    ms: 0,
    restore: () => {
      if (own) target[method] = original;
      else delete target[method];
    },
  };
  target[method] = async (...args: unknown[]) => {
    const t0 = performance.now();
    try {
      return await original.apply(obj, args);
    } finally {
      s.calls++;
      s.ms += performance.now() - t0;
    }
  };
  return s;
}

/** MariaDB counters read around a fill: statements, row lock waits and their total time, fsyncs. */
const DB_COUNTERS = ['Questions', 'Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Innodb_data_fsyncs'] as const;
export type DbCounters = Record<(typeof DB_COUNTERS)[number], number>;

async function dbCounters(storage: SqlStorage): Promise<DbCounters> {
  const r = await sql<{
    Variable_name: string;
    Value: string;
  }>`SHOW GLOBAL STATUS WHERE Variable_name IN (${sql.join([...DB_COUNTERS])})`.execute(storage.database.db);
  const out = Object.fromEntries(DB_COUNTERS.map((k) => [k, 0])) as DbCounters;
  for (const row of r.rows) out[row.Variable_name as keyof DbCounters] = Number(row.Value);
  return out;
}

async function unsettled(storage: SqlStorage, projectPk: number, colNo: number): Promise<number> {
  const r = await sql<{
    n: number;
  }>`SELECT COUNT(*) AS n FROM cell_keys WHERE project_pk = ${projectPk} AND col_no = ${colNo} AND status IN (${sql.join(UNSETTLED)})`.execute(
    storage.database.db,
  );
  return Number(r.rows[0]?.n ?? 0);
}

export async function fillColumn(kernel: Kernel, project: Project, rows: number, workers: WorkerSet, o: FillOptions): Promise<FillResult> {
  const storage = kernel.storage as SqlStorage;
  const view = await createColumn(kernel, project, { name: o.column, tool_id: o.tool, config: { ...BENCH_TOOLS[o.tool].config } });
  const column = (await storage.projects.columns(project.pk)).find((c) => c.id === view.col_id) as Column;
  const cpu = new CpuMeter({
    bench: process.pid,
    ...Object.fromEntries(workers.pids.map((pid, i) => [`worker ${i + 1}`, pid])),
    ...o.serverPids,
  });

  const counters0 = await dbCounters(storage);
  const claims = spy(storage.rows, 'moveStatus');
  const enqueues = spy(kernel.queue, 'enqueue');
  const t0 = Date.now();
  let runDone = 0;
  let runError: unknown;
  runColumns(kernel, project, { col_ids: [view.col_id] }).then(
    () => {
      runDone = Date.now();
    },
    (e: unknown) => {
      runError = e;
    },
  );

  // Cheap polls: the queue's counters in Redis (acknowledged = cells written); the unsettled-cell
  // count in MariaDB (a scan of the column's keys) only once the queue looks drained, to confirm.
  const deadline = t0 + o.timeoutSeconds * 1000;
  let lastProgress = t0;
  let doneAt = 0;
  let firstJobAt = 0;
  try {
    while (!doneAt) {
      await Bun.sleep(o.pollMs);
      if (runError) throw runError;
      if (workers.exited()) throw new Error(`a worker exited during the fill\n${workers.stderrTail()}`);
      if (Date.now() > deadline) throw new Error(`fill not done within ${o.timeoutSeconds} s\n${workers.stderrTail()}`);
      const stats = await kernel.queue.stats();
      const now = Date.now();
      if (stats.dead > 0) throw new Error(`jobs dead-lettered: ${JSON.stringify(await kernel.queue.listDead(3))}`);
      const left = stats.waiting + stats.pending + stats.delayed;
      if (!firstJobAt && enqueues.calls > left) firstJobAt = now;
      if (runDone && left === 0 && (await unsettled(storage, project.pk, column.no)) === 0) doneAt = now;
      if (now - lastProgress >= 5_000) {
        lastProgress = now;
        process.stderr.write(
          `  ${o.label}: ${((now - t0) / 1000).toFixed(0)} s, jobs waiting ${stats.waiting}, running ${stats.pending}\n`,
        );
      }
    }
  } finally {
    claims.restore();
    enqueues.restore();
  }
  const usage = cpu.read();
  const counters1 = await dbCounters(storage);
  const db = Object.fromEntries(Object.entries(counters1).map(([k, v]) => [k, v - counters0[k as keyof DbCounters]])) as DbCounters;

  const counted = await sql<{
    status: string;
    n: number;
  }>`SELECT status, COUNT(*) AS n FROM cell_keys WHERE project_pk = ${project.pk} AND col_no = ${column.no} GROUP BY status`.execute(
    storage.database.db,
  );
  const statuses = Object.fromEntries(counted.rows.map((r) => [r.status, Number(r.n)]));
  if ((statuses.completed ?? 0) !== rows) throw new Error(`expected ${rows} completed cells, got ${JSON.stringify(statuses)}`);
  const all = await storage.projects.columns(project.pk);
  // Sequence numbers are unique across projects: sample the first, a middle and the last row of this one.
  const ends = await sql<{
    lo: number;
    hi: number;
  }>`SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM project_rows WHERE project_pk = ${project.pk}`.execute(storage.database.db);
  const lo = Number(ends.rows[0]?.lo);
  const hi = Number(ends.rows[0]?.hi);
  const sample = await storage.rows.getMany(project.pk, [...new Set([lo, Math.floor((lo + hi) / 2), hi])], [column.no]);
  if (sample.length === 0) throw new Error('no rows to check');
  for (const r of sample) {
    const want = BENCH_TOOLS[o.tool].expected(Object.fromEntries(all.map((c) => [c.name, r.cells[c.no]?.v])));
    if (r.cells[column.no]?.v !== want)
      throw new Error(`row ${r.seq}: ${o.column} is ${JSON.stringify(r.cells[column.no]?.v)}, expected ${want}`);
  }

  const seconds = (doneAt - t0) / 1000;
  const rowsPerJob = enrichJobRows(kernel, column);
  const jobs = Math.ceil(rows / rowsPerJob);
  return {
    label: o.label,
    tool: o.tool,
    rows,
    rowsPerJob,
    otherToolColumns: (await storage.projects.columns(project.pk)).filter((c) => c.type === 'tool' && c.no !== column.no).length,
    jobs,
    workers: workers.pids.length,
    concurrency: o.concurrency,
    seconds,
    cellsPerSecond: rows / seconds,
    jobsPerSecond: jobs / seconds,
    runColumns: { ms: runDone - t0, claimMs: claims.ms, enqueueMs: enqueues.ms },
    firstJobMs: (firstJobAt || doneAt) - t0,
    statuses,
    cpu: usage,
    db,
    profiles: await workers.profiles(),
  };
}
