import { ServiceError, notFound, validationError } from '../errors.ts';
import type { IcpDefinition } from '../icp/definition.ts';
import { type CriterionResult, hasCriteria, scoreRow } from '../icp/score.ts';
import type { Kernel } from '../kernel.ts';
import type { Cell, Column, Project, Workspace } from '../model.ts';
import { rowValues } from '../rows/row-view.ts';
import type { IcpRecord } from '../storage.ts';
import { columnView, createColumn } from './columns.ts';
import { iso } from './projects.ts';
import { toolColumnNos } from './rows.ts';

export const ICP_SCORE_TOOL = 'icp_score';
/** Rows read and written per round while scoring a project. */
const SCORE_PAGE = 1000;
/** How many best-fitting rows score_icp returns with their reasons. */
export const TOP_MATCHES = 25;

/** An ICP as REST and MCP show it (DESIGN.md §3). */
export function icpView(r: IcpRecord) {
  return { id: r.id, name: r.name, definition: r.definition, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) };
}

/** What the schema cannot say: a range's min is not above its max. */
function checkDefinition(def: IcpDefinition): void {
  for (const field of ['employee_range', 'revenue_range'] as const) {
    const r = def[field];
    if (r?.min !== undefined && r.max !== undefined && r.min > r.max) {
      throw validationError(`definition.${field}: min (${r.min}) is above max (${r.max})`, [{ path: `definition.${field}`, message: 'min must not be above max' }]);
    }
  }
}

export async function findIcp(kernel: Kernel, workspace: Workspace, id: string): Promise<IcpRecord> {
  const icp = await kernel.storage.icps.get(workspace.id, id);
  if (!icp) throw notFound(`ICP ${id}`);
  return icp;
}

export async function createIcp(kernel: Kernel, workspace: Workspace, input: { name: string; definition: IcpDefinition }) {
  checkDefinition(input.definition);
  return icpView(await kernel.storage.icps.create({ workspaceId: workspace.id, name: input.name, definition: input.definition }));
}

export async function updateIcp(kernel: Kernel, workspace: Workspace, id: string, patch: { name?: string; definition?: IcpDefinition }) {
  if (patch.definition) checkDefinition(patch.definition);
  const updated = await kernel.storage.icps.update(workspace.id, id, patch);
  if (!updated) throw notFound(`ICP ${id}`);
  return icpView(updated);
}

/** Same JSON whatever the key order, to tell whether a column's snapshot is the ICP's current definition. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The tool column that receives the scores: created when missing, with the ICP's definition in its
 * config (the icp_score plugin cannot read storage, so auto-run and re-runs score from that snapshot).
 * An existing column must be an icp_score column of this very ICP version, or its later rows would
 * be scored against another definition than the one written now.
 */
async function scoreColumn(kernel: Kernel, projectColumns: Column[], icp: IcpRecord, name: string, project: Project): Promise<Column> {
  const existing = projectColumns.find((c) => c.name === name);
  if (!existing) {
    await createColumn(kernel, project, { name, tool_id: ICP_SCORE_TOOL, config: { icp_id: icp.id, definition: icp.definition } });
    const created = (await kernel.storage.projects.columns(project.pk)).find((c) => c.name === name);
    if (!created) throw new ServiceError('internal_error', `column ${name} vanished after creation`);
    return created;
  }
  const config = existing.config as { icp_id?: string; definition?: unknown } | null;
  if (existing.type !== 'tool' || existing.toolId !== ICP_SCORE_TOOL || config?.icp_id !== icp.id) {
    throw validationError(`Column "${name}" exists and is not an icp_score column of ICP ${icp.id}; choose another col_name`, [
      { path: 'col_name', message: 'names a column that holds something else' },
    ]);
  }
  if (canonical(config.definition) !== canonical(icp.definition)) {
    throw validationError(`Column "${name}" holds scores of an earlier version of this ICP (it keeps the definition it was created with); score into a new col_name`, [
      { path: 'col_name', message: 'names a column scored with an older definition' },
    ]);
  }
  return existing;
}

/**
 * Scores every live row of a project against an ICP, page by page. With `col_name` the scores are
 * also written, as completed cells, into that tool column right away (no job: scoring is pure and
 * free), so get_project_rows shows them as soon as this returns.
 */
export async function scoreProject(kernel: Kernel, workspace: Workspace, icpId: string, input: { project_id: string; col_name?: string }) {
  const icp = await findIcp(kernel, workspace, icpId);
  const project = await kernel.storage.projects.get(workspace.id, input.project_id);
  if (!project) throw new ServiceError('not_found', `Project ${input.project_id} not found (or not in this workspace)`);
  if (!hasCriteria(icp.definition)) {
    throw validationError(`ICP ${icp.id} has no criteria to score; set at least one with update_icp`, [{ path: 'definition', message: 'is empty' }]);
  }
  let columns = await kernel.storage.projects.columns(project.pk);
  const target = input.col_name ? await scoreColumn(kernel, columns, icp, input.col_name, project) : undefined;
  if (target) columns = await kernel.storage.projects.columns(project.pk);
  const readable = columns.filter((c) => c.no !== target?.no);

  let scored = 0;
  let sum = 0;
  let top: { row_id: string; score: number; reasons: CriterionResult[] }[] = [];
  for (let offset = 0; ; offset += SCORE_PAGE) {
    const { rows } = await kernel.storage.rows.page({ projectPk: project.pk, toolCols: toolColumnNos(columns), filter: null, sort: [], limit: SCORE_PAGE, offset });
    if (rows.length === 0) break;
    const cells: { seq: number; cell: Cell }[] = [];
    for (const row of rows) {
      const { score, reasons } = scoreRow(icp.definition, rowValues(readable, row));
      cells.push({ seq: row.seq, cell: { v: score, s: 'completed' } });
      if (score === null) continue;
      scored++;
      sum += score;
      top.push({ row_id: String(row.seq), score, reasons });
    }
    // Keep only the best matches in memory, ties in row order.
    top = top.sort((a, b) => b.score - a.score || Number(a.row_id) - Number(b.row_id)).slice(0, TOP_MATCHES);
    if (target) await kernel.storage.rows.writeCells(project.pk, target.no, cells);
    if (rows.length < SCORE_PAGE) break;
  }
  return {
    icp_id: icp.id,
    project_id: project.id,
    scored,
    average_score: scored ? Math.round((sum / scored) * 10) / 10 : null,
    column: target ? columnView(target) : null,
    top,
  };
}
