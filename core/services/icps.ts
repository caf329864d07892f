import { quoted, ServiceError, notFound, validationError } from '../errors.ts';
import type { IcpDefinition } from '../icp/definition.ts';
import { icpScoreTool } from '../icp/icp-score-tool.ts';
import { hasCriteria } from '../icp/score.ts';
import { averageScore, emptyTally, scoreRowsInto } from '../icp/score-tally.ts';
import { newId } from '../ids.ts';
import { ICP_SCORE_JOB } from '../jobs/job-names.ts';
import { writeStartingJobs } from '../jobs/job-outbox.ts';
import type { Kernel } from '../kernel.ts';
import type { Column, Project, Workspace } from '../model.ts';
import type { IcpRecord, IcpScoreRunRecord } from '../ports/storage.ts';
import { columnView } from '../columns/column-view.ts';
import { createColumn } from './columns.ts';
import { iso } from './projects.ts';
import { toolColumnNos } from './rows.ts';

/** The id of the kernel's ICP score tool, which fills score columns. */
export const ICP_SCORE_TOOL = icpScoreTool.id;

/** An ICP as REST and MCP show it (docs/api.md). */
export function icpView(r: IcpRecord) {
  return { id: r.id, name: r.name, definition: r.definition, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) };
}

/** What the schema cannot say: a range's min is not above its max. */
function checkDefinition(def: IcpDefinition): void {
  for (const field of ['employee_range', 'revenue_range'] as const) {
    const r = def[field];
    if (r?.min !== undefined && r.max !== undefined && r.min > r.max) {
      throw validationError(`definition.${field}: min (${r.min}) is above max (${r.max})`, [
        { path: `definition.${field}`, message: 'min must not be above max' },
      ]);
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
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The tool column that receives the scores: created when missing, with the ICP's definition in its
 * config (the ICP score tool cannot read storage, so auto-run and re-runs score from that snapshot).
 * An existing column must be an ICP score column of this very ICP version, or its later rows would
 * be scored against another definition than the one written now.
 */
async function scoreColumn(
  kernel: Kernel,
  projectColumns: Column[],
  icp: IcpRecord,
  name: string,
  project: Project,
  cellStatus: 'pending' | 'queued',
): Promise<Column> {
  const existing = projectColumns.find((c) => c.name === name);
  if (!existing) {
    await createColumn(
      kernel,
      project,
      { name, tool_id: ICP_SCORE_TOOL, config: { icp_id: icp.id, definition: icp.definition } },
      { cellStatus },
    );
    const created = (await kernel.storage.projects.columns(project.pk)).find((c) => c.name === name);
    if (!created) throw new ServiceError('internal_error', `column ${name} vanished after creation`);
    return created;
  }
  const config = existing.config as { icp_id?: string; definition?: unknown } | null;
  if (existing.type !== 'tool' || existing.toolId !== ICP_SCORE_TOOL || config?.icp_id !== icp.id) {
    throw validationError(`Column "${name}" exists and is not an ${ICP_SCORE_TOOL} column of ICP ${icp.id}; choose another col_name`, [
      { path: 'col_name', message: 'names a column that holds something else' },
    ]);
  }
  if (canonical(config.definition) !== canonical(icp.definition)) {
    throw validationError(
      `Column "${name}" holds scores of an earlier version of this ICP (it keeps the definition it was created with); score into a new col_name`,
      [{ path: 'col_name', message: 'names a column scored with an older definition' }],
    );
  }
  return existing;
}

/** Projects of at most this many rows are scored inline; larger ones by a job, with a preview of their first rows. */
export const INLINE_ROWS = 1_000;

/**
 * score_icp. Checks the request (ICP, project, criteria, column) as it comes, then scores: a
 * project of at most INLINE_ROWS rows at once (scores written, run `completed`, the preview is
 * the whole result); a larger one by a job on the queue (run `queued`), answering a preview over
 * its first INLINE_ROWS rows. Either way the answer names a run that get_icp_score_run reads.
 */
export async function scoreProject(kernel: Kernel, workspace: Workspace, icpId: string, input: { project_id: string; col_name?: string }) {
  const icp = await findIcp(kernel, workspace, icpId);
  const { projects, rows, icpScoreRuns } = kernel.storage;
  const project = await projects.get(workspace.id, input.project_id);
  if (!project) throw new ServiceError('not_found', `Project ${quoted(input.project_id, 128)} not found (or not in this workspace)`);
  if (!hasCriteria(icp.definition)) {
    throw validationError(`ICP ${icp.id} has no criteria to score; set at least one with update_icp`, [
      { path: 'definition', message: 'is empty' },
    ]);
  }
  const rowsTotal = (await rows.counts([project.pk])).get(project.pk) ?? 0;
  const inline = rowsTotal <= INLINE_ROWS;
  const columns = await projects.columns(project.pk);
  // A new column's cells wait as `queued` while a job fills them; inline they are written at once.
  const target = input.col_name
    ? await scoreColumn(kernel, columns, icp, input.col_name, project, inline ? 'pending' : 'queued')
    : undefined;
  const readable = columns.filter((c) => c.no !== target?.no);

  const preview = emptyTally();
  const first = await rows.pageAfter(project.pk, 0, INLINE_ROWS, toolColumnNos(readable));
  const cells = scoreRowsInto(preview, icp.definition, readable, first);
  const run = {
    id: newId(),
    workspaceId: workspace.id,
    icpId: icp.id,
    projectPk: project.pk,
    projectId: project.id,
    colNo: target?.no ?? null,
    definition: icp.definition,
    rowsTotal,
    error: null,
  };
  if (inline) {
    if (target) await rows.writeCells(project.pk, target.no, cells);
    await icpScoreRuns.create({
      ...run,
      status: 'completed',
      rowsDone: first.length,
      afterSeq: first[first.length - 1]?.seq ?? 0,
      tally: preview,
    });
  } else {
    // The run and its job commit together; with Redis away the job waits in the outbox.
    await writeStartingJobs(
      kernel,
      () => [{ type: ICP_SCORE_JOB, payload: { run_id: run.id }, tenant: project.workspaceId }],
      (jobs) => icpScoreRuns.create({ ...run, status: 'queued', rowsDone: 0, afterSeq: 0, tally: emptyTally() }, jobs),
    );
  }
  return {
    icp_id: icp.id,
    project_id: project.id,
    run_id: run.id,
    status: inline ? ('completed' as const) : ('queued' as const),
    column: target ? columnView(target, kernel.plugins) : null,
    rows_total: rowsTotal,
    preview: {
      rows_considered: first.length,
      partial: !inline,
      scored: preview.scored,
      average_score: averageScore(preview),
      top: preview.top,
    },
  };
}

/** A score run of this workspace and ICP, else a 404 (another workspace's run reads as missing). */
export async function findScoreRun(kernel: Kernel, workspace: Workspace, icpId: string, runId: string): Promise<IcpScoreRunRecord> {
  const run = await kernel.storage.icpScoreRuns.get(workspace.id, runId);
  if (!run || run.icpId !== icpId) throw notFound(`Score run ${runId} of ICP ${icpId}`);
  return run;
}

/** get_icp_score_run: where a run stands, and its tally over the rows scored so far (the whole project once completed). */
export async function scoreRunView(kernel: Kernel, run: IcpScoreRunRecord) {
  const project = await kernel.storage.projects.getByPk(run.projectPk);
  const column =
    project && run.colNo !== null ? (await kernel.storage.projects.columns(project.pk)).find((c) => c.no === run.colNo) : undefined;
  return {
    run_id: run.id,
    icp_id: run.icpId,
    project_id: run.projectId,
    status: run.status,
    column: column ? columnView(column, kernel.plugins) : null,
    rows_total: run.rowsTotal,
    rows_done: run.rowsDone,
    scored: run.tally.scored,
    average_score: averageScore(run.tally),
    top: run.tally.top,
    error_message: run.error,
    createdAt: iso(run.createdAt),
    updatedAt: iso(run.updatedAt),
  };
}
