import { sql } from 'kysely';
import type { SqlStorage } from '../../adapters/storage/sql-storage.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Column, Project } from '../../core/model.ts';
import { renderTemplate } from '../../core/columns/templates.ts';
import { runTool } from '../../core/handlers/enrichment/run-tool.ts';
import { createColumn } from '../../core/services/columns.ts';
import { enrichJobRows } from '../../core/services/row-insert.ts';
import { BENCH_TOOLS, type BenchTool } from './jobs-fill.ts';
import { processCpuSeconds } from './proc-cpu.ts';

/**
 * The steps of one `enrich.batch` job (core/handlers/run-enrichment.ts), replayed one job at a time in
 * this process on a fresh column: no queue, no concurrency, so each step's wall time is its own
 * latency, and the CPU it costs is split between this process (JS: Kysely, mysql2, JSON, the tool)
 * and mariadbd.
 */

export interface StepCost {
  step: string;
  /** Per job (rowsPerJob rows), averaged. */
  wallMs: number;
  jsCpuMs: number;
  dbCpuMs: number;
}

export interface StepReplay {
  tool: BenchTool;
  jobs: number;
  rowsPerJob: number;
  steps: StepCost[];
}

export async function replaySteps(
  kernel: Kernel,
  project: Project,
  o: { tool: BenchTool; rows: number; column: string; mariadbPid: number | undefined },
): Promise<StepReplay> {
  const { projects, rows } = kernel.storage;
  const view = await createColumn(kernel, project, { name: o.column, tool_id: o.tool, config: { ...BENCH_TOOLS[o.tool].config } });
  const tool = kernel.plugins.tool(o.tool);
  if (!tool) throw new Error(`tool ${o.tool} is not installed`);
  const totals = new Map<string, { wall: number; js: number; db: number }>();
  const step = async <T>(name: string, call: () => Promise<T>): Promise<T> => {
    const cpu0 = process.cpuUsage();
    const db0 = o.mariadbPid ? processCpuSeconds(o.mariadbPid) : 0;
    const t0 = performance.now();
    const value = await call();
    const wall = performance.now() - t0;
    const js = process.cpuUsage(cpu0);
    const t = totals.get(name) ?? { wall: 0, js: 0, db: 0 };
    t.wall += wall;
    t.js += (js.user + js.system) / 1000;
    t.db += o.mariadbPid ? (processCpuSeconds(o.mariadbPid) - db0) * 1000 : 0;
    totals.set(name, t);
    return value;
  };

  const planned = (await projects.columns(project.pk)).find((c) => c.id === view.col_id) as Column;
  const perJob = enrichJobRows(kernel, planned);
  // Sequence numbers are unique across projects: take this project's own.
  const all = (
    await sql<{
      seq: number;
    }>`SELECT seq FROM project_rows WHERE project_pk = ${project.pk} AND deleted_at IS NULL ORDER BY seq LIMIT ${o.rows}`.execute(
      (kernel.storage as SqlStorage).database.db,
    )
  ).rows.map((r) => Number(r.seq));
  const jobs = Math.max(1, Math.floor(all.length / perJob));
  for (let j = 0; j < jobs; j++) {
    const seqs = all.slice(j * perJob, (j + 1) * perJob);
    const columns = await step('project + columns (getByPk, columns)', async () => {
      await projects.getByPk(project.pk);
      return projects.columns(project.pk);
    });
    const column = columns.find((c) => c.id === view.col_id) as Column;
    // The fresh column's cells are `pending`; a job claims `queued`: the same statement either way.
    const claimed = await step('claim cells (moveHeld)', () =>
      rows.moveHeld(project.pk, column.no, seqs, ['pending', 'queued'], 'running', { jobId: `replay-${j}`, hold: true }),
    );
    if (claimed.length !== seqs.length) throw new Error(`replay: claimed ${claimed.length} of ${seqs.length} cells`);
    // As the runner does: the cells of every other tool column are read with the rows.
    const others = columns.filter((c) => c.type === 'tool' && c.no !== column.no).map((c) => c.no);
    const loaded = await step('read rows (getMany)', () => rows.getMany(project.pk, claimed, others));
    const results = await step('render config + run the tool', async () => {
      const items = loaded.map((row) => {
        const values = Object.fromEntries(columns.map((c) => [c.name, row.cells[c.no]?.v ?? null]));
        return { rowId: String(row.seq), config: renderTemplate(column.config, values) as Record<string, unknown>, row: values };
      });
      // As the runner does: the host's run step (batches, or per-row concurrency).
      return runTool(kernel, tool, items, {
        providerMode: 'sandbox',
        env: () => undefined,
        signal: new AbortController().signal,
        log: () => undefined,
        expressions: kernel.expressions,
      });
    });
    const cells = loaded.map((row, i) => {
      const r = results[i];
      return { seq: row.seq, cell: r?.status === 'ok' ? { v: r.value, s: 'completed' as const } : { v: null, s: 'no_result' as const } };
    });
    await step('write cells (writeCells)', () => rows.writeCells(project.pk, column.no, cells));
  }
  return {
    tool: o.tool,
    jobs,
    rowsPerJob: perJob,
    steps: [...totals].map(([name, t]) => ({ step: name, wallMs: t.wall / jobs, jsCpuMs: t.js / jobs, dbCpuMs: t.db / jobs })),
  };
}
