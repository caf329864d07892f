import { autoOrder } from '../columns/auto-order.ts';
import { columnSteps, columnsReadBy } from '../columns/column-steps.ts';
import { conditionsHold } from '../columns/run-condition.ts';
import { renderTemplate } from '../columns/templates.ts';
import { builderReservation } from '../credits/charges.ts';
import { cacheKeysOf, cacheTtlMs } from '../columns/result-cache.ts';
import type { ReadyRow } from '../columns/enrich-batch.ts';
import type { Kernel } from '../kernel.ts';
import type { CellStatus, Column, Project, StoredRow, Workspace } from '../model.ts';
import { isEmptyValue } from '../rows/cell-values.ts';
import { rowValues } from '../rows/row-view.ts';
import type { AnyTool } from '../plugins/plugin-types.ts';
import { stepPrice } from '../plugins/tool-price.ts';
import type { ToolStats } from '../ports/storage.ts';
import { type RunMode, runSelection } from './columns.ts';
import { plannedBuild } from './projects.ts';

/** What a run would cost (docs/enrichment.md): nothing is written, queued or charged to tell it. */
export interface Estimate {
  cells: number;
  credits_max: number;
  credits_expected: number;
  balance: number;
  balance_after: number;
}

/** A hit rate while a tool has few figures in the workspace: a coin toss, pulled toward what it has found. */
const PRIOR = { rate: 0.5, weight: 10 };

/** The chance a step finds a value, from the tool's figures in the workspace (a coin toss before it has any). */
export function hitRate(s: ToolStats | undefined): number {
  return ((s?.found ?? 0) + PRIOR.rate * PRIOR.weight) / ((s?.attempts ?? 0) + PRIOR.weight);
}

async function answer(kernel: Kernel, workspaceId: string, cells: number, max: number, expected: number): Promise<Estimate> {
  const balance = await kernel.storage.credits.balance(workspaceId);
  const credits_expected = Math.round(expected * 100) / 100;
  return { cells, credits_max: max, credits_expected, balance, balance_after: Math.round((balance - credits_expected) * 100) / 100 };
}

/** POST /projects/estimate: what POST /projects with this body would reserve and spend (builders charge per row written). */
export async function estimateBuild(
  kernel: Kernel,
  workspace: Workspace,
  input: { builder_id: string; form_data: Record<string, unknown> },
): Promise<Estimate> {
  const { builder, target } = await plannedBuild(kernel, workspace, input);
  const max = builderReservation(builder, target);
  // The source may hold fewer rows than the target: what is not written is given back, so the reservation is the most.
  return answer(kernel, workspace.id, target, max, max);
}

const UNSETTLED: CellStatus[] = ['pending', 'queued', 'running'];

/** Rows of the project a run would read, in pages (all rows, or the named ones). */
async function* runRows(kernel: Kernel, project: Project, toolCols: number[], named: number[] | undefined): AsyncGenerator<StoredRow[]> {
  if (named) {
    for (let i = 0; i < named.length; i += 500) yield kernel.storage.rows.getMany(project.pk, named.slice(i, i + 500), toolCols);
    return;
  }
  let after = 0;
  for (;;) {
    const page = await kernel.storage.rows.pageAfter(project.pk, after, 1000, toolCols);
    if (page.length === 0) return;
    yield page;
    after = (page[page.length - 1] as StoredRow).seq;
  }
}

/** Cost of one row's cell, step by step, as the run decides it: missing inputs pass on, the cache is free. */
interface StepCost {
  max: number;
  expected: number;
}

/**
 * POST /projects/{id}/columns/estimate: the cells a run with this selection would queue, and what
 * they would cost. Applied as the run applies them: the run condition (a false one is skipped,
 * free), required inputs (a step without them is passed), the workspace's result cache (a hit is
 * free, and ends the cell), the column's per-row cap and, with order "auto", the order the run
 * would take. `credits_max`: every step charged that may be; `credits_expected`: per-result and
 * later waterfall steps weighed by the tools' hit rates in this workspace (GET /tools/{id}/stats).
 * A cell whose inputs come from a tool column not settled yet is counted at its full cost.
 */
export async function estimateColumns(
  kernel: Kernel,
  project: Project,
  input: { col_ids?: string[]; include_errors?: boolean; mode?: RunMode; row_ids?: string[] },
): Promise<Estimate> {
  const { chosen, from, rows: named } = await runSelection(kernel, project, input);
  const columns = await kernel.storage.projects.columns(project.pk);
  const toolCols = columns.filter((c) => c.type === 'tool').map((c) => c.no);
  const toolIds = [...new Set(chosen.flatMap((c) => columnSteps(c).map((s) => s.tool_id)))];
  const stats = await kernel.storage.toolStats.get(project.workspaceId, toolIds);
  let cells = 0;
  let max = 0;
  let expected = 0;
  if (named?.length === 0) return answer(kernel, project.workspaceId, 0, 0, 0);
  for await (const page of runRows(kernel, project, toolCols, named)) {
    for (const column of chosen) {
      const taken = page.filter((r) => from.includes(r.cells[column.no]?.s ?? 'pending'));
      if (taken.length === 0) continue;
      cells += taken.length;
      const cost = await columnCost(kernel, project, columns, column, chosen, from, taken, stats);
      max += cost.max;
      expected += cost.expected;
    }
  }
  return answer(kernel, project.workspaceId, cells, max, expected);
}

async function columnCost(
  kernel: Kernel,
  project: Project,
  columns: Column[],
  column: Column,
  chosen: Column[],
  from: CellStatus[],
  rows: StoredRow[],
  stats: Map<string, ToolStats>,
): Promise<StepCost> {
  const reads = columnsReadBy(column);
  // Inputs not known yet: another tool column this one reads is unsettled, or this run re-runs it.
  const deps = columns.filter((c) => c.type === 'tool' && c.no !== column.no && reads.has(c.name));
  const unknown = (r: StoredRow) =>
    deps.some((d) => {
      const s = r.cells[d.no]?.s ?? 'pending';
      return UNSETTLED.includes(s) || (chosen.includes(d) && from.includes(s));
    });
  const known = rows.filter((r) => !unknown(r));
  const blind = rows.length - known.length;

  let open = known.map((row) => ({ row, values: rowValues(columns, row) }));
  if (column.runCondition && open.length) {
    const verdicts = await conditionsHold(
      kernel.expressions,
      column.runCondition,
      open.map((o) => o.values),
    );
    open = open.filter((_, i) => verdicts[i]?.holds);
  }
  const steps = column.stepOrder === 'auto' ? autoOrder(columnSteps(column), stats) : columnSteps(column);
  const cap = column.maxCreditsPerRow ?? Number.POSITIVE_INFINITY;
  const total: StepCost = { max: 0, expected: 0 };

  // Rows whose inputs are not known: every step, at its price (bounded by the per-row cap).
  if (blind > 0) {
    const full = fullCost(kernel, steps, stats, cap);
    total.max += blind * full.max;
    total.expected += blind * full.expected;
  }
  // Rows with known inputs: step by step, as prepare → cache → charge decide it.
  const costs = new Map(open.map((o) => [o.row.seq, newRowCost()]));
  for (const step of steps) {
    const tool = kernel.plugins.tool(step.tool_id);
    if (!tool || open.length === 0) break;
    const ready: ReadyRow[] = [];
    for (const o of open) {
      const config = renderTemplate(step.config, o.values) as Record<string, unknown>;
      if (tool.requires.some((f) => isEmptyValue(config[f]))) continue; // passed on to the next step
      ready.push({ ...o, item: { rowId: String(o.row.seq), config, row: o.values }, chargeKey: '' });
    }
    const keys = cacheKeysOf(kernel, project.workspaceId, tool, ready);
    const hits = keys.size
      ? await kernel.storage.cache.getMany([...new Set(keys.values())], Date.now() - cacheTtlMs(kernel, tool))
      : new Map();
    const done = new Set<number>();
    for (const r of ready) {
      const key = keys.get(r.row.seq);
      const cost = costs.get(r.row.seq) as RowCost;
      // Reused (free) or stopped by the per-row cap: the cell ends here, as in the run.
      if ((key !== undefined && hits.has(key)) || !chargeStep(cost, tool, stepPrice(tool, step.config), hitRate(stats.get(tool.id)), cap))
        done.add(r.row.seq);
    }
    open = open.filter((o) => !done.has(o.row.seq));
  }
  for (const c of costs.values()) {
    total.max += Math.max(c.worst, c.missed);
    total.expected += c.expected;
  }
  return total;
}

/**
 * What one row has cost along its steps: `missed`, the net spend when no step has found anything
 * (per-result charges are refunded); `worst`, the most it can have cost (a per-result step that finds
 * keeps its charge and ends the cell); `expected`, weighed by hit rates; `reach`, the chance no step
 * has found a value yet.
 */
interface RowCost {
  missed: number;
  worst: number;
  expected: number;
  reach: number;
}

const newRowCost = (): RowCost => ({ missed: 0, worst: 0, expected: 0, reach: 1 });

/**
 * Charges one step as prepare-step and charge-rows would (`price`: the step's, every unit of a
 * per-unit tool counted); false when the per-row cap ends the cell first.
 */
function chargeStep(cost: RowCost, tool: AnyTool, price: number, hit: number, cap: number): boolean {
  if (price > 0 && cost.missed + price > cap) return false;
  if (tool.cost.per === 'result') {
    cost.worst = Math.max(cost.worst, cost.missed + price);
    cost.expected += cost.reach * price * hit;
  } else {
    cost.missed += price;
    cost.worst = Math.max(cost.worst, cost.missed);
    cost.expected += cost.reach * price;
  }
  cost.reach *= 1 - hit;
  return true;
}

/** Every step charged as the run would if no input were missing and nothing were cached. */
function fullCost(kernel: Kernel, steps: ReturnType<typeof columnSteps>, stats: Map<string, ToolStats>, cap: number): StepCost {
  const cost = newRowCost();
  for (const step of steps) {
    const tool = kernel.plugins.tool(step.tool_id);
    if (!tool || !chargeStep(cost, tool, stepPrice(tool, step.config), hitRate(stats.get(tool.id)), cap)) break;
  }
  return { max: Math.max(cost.worst, cost.missed), expected: cost.expected };
}
