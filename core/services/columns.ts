import { type FieldError, quoted, ServiceError, validationError } from '../errors.ts';
import { columnNameProblems } from '../columns/column-names.ts';
import type { Kernel } from '../kernel.ts';
import type { CellStatus, Column, Project, WaterfallStep } from '../model.ts';
import { columnView } from '../columns/column-view.ts';
import { compileCondition } from '../columns/run-condition.ts';
import { columnsReadBy } from '../columns/column-steps.ts';
import { referencedColumns } from '../columns/templates.ts';
import { valueBytes } from '../rows/cell-limits.ts';
import { schemaErrors } from '../schema/validate.ts';
import { writeStartingJobs } from '../jobs/job-outbox.ts';
import { enrichmentJobs } from './row-insert.ts';
import { startRun } from '../credits/runs.ts';

export interface CreateColumnInput {
  name: string;
  tool_id?: string;
  config?: Record<string, unknown>;
  auto_run?: boolean;
  run_condition?: string | null;
  waterfall?: WaterfallStep[];
  max_credits_per_row?: number;
  order?: 'listed' | 'auto';
}

function knownTools(kernel: Kernel): string {
  return kernel.plugins
    .listTools()
    .map((t) => t.id)
    .join(', ');
}

/** Checks one tool step: the tool exists, its config fits the tool's schema, its templates name columns. */
export function checkStep(kernel: Kernel, step: WaterfallStep, path: string, columnNames: Set<string>, errors: FieldError[]): void {
  const tool = kernel.plugins.tool(step.tool_id);
  if (!tool) {
    errors.push({
      path: `${path}.tool_id`,
      message: `unknown tool ${quoted(step.tool_id)}; use one of: ${knownTools(kernel)} (GET /tools)`,
    });
    return;
  }
  const schemaProblems = schemaErrors(tool.input, step.config, `${path}.config`);
  errors.push(...schemaProblems);
  if (schemaProblems.length === 0 && tool.checkConfig) {
    for (const e of tool.checkConfig(step.config)) errors.push({ path: `${path}.config.${e.path}`, message: e.message });
  }
  for (const ref of referencedColumns(step.config)) {
    if (!columnNames.has(ref))
      errors.push({ path: `${path}.config`, message: `references {{${ref}}}, but the project has no column named "${ref}"` });
  }
}

/** A column's config (all waterfall steps) is settings, not data: it stays small. */
const MAX_CONFIG_BYTES = 65_536;

/** The problem of a column's steps over MAX_CONFIG_BYTES, at `path`. */
export function configSizeProblems(steps: WaterfallStep[], path: string): FieldError[] {
  const bytes = valueBytes(steps);
  if (bytes <= MAX_CONFIG_BYTES) return [];
  return [
    {
      path,
      message: `is ${bytes.toLocaleString('en-US')} bytes; a column's config holds at most ${MAX_CONFIG_BYTES.toLocaleString('en-US')}`,
    },
  ];
}

/** A run condition that does not parse, as a field problem. */
export function conditionProblems(condition: string | null | undefined): FieldError[] {
  if (!condition) return [];
  try {
    compileCondition(condition);
    return [];
  } catch (e) {
    if (e instanceof ServiceError) return [{ path: 'run_condition', message: String((e.detail as { message: string }).message) }];
    throw e;
  }
}

/** Refuses a column with problems: 422 naming each one, nothing changed. */
export function refuseColumnProblems(errors: FieldError[]): void {
  if (errors.length === 0) return;
  throw validationError(
    `Invalid column: ${errors.map((e) => `${e.path.replace(/^\./, '')} ${e.message}`).join('; ')}`,
    errors.map((e) => ({ ...e, path: e.path.replace(/^\./, '') })),
  );
}

/**
 * Adds a tool column. Existing rows get a `pending` cell (run them with run_pending_columns);
 * with auto_run, rows added later are enriched as they arrive. A caller that fills the column
 * itself right away (score_icp) may start the cells `queued`.
 */
export async function createColumn(
  kernel: Kernel,
  project: Project,
  input: CreateColumnInput,
  options: { cellStatus?: 'pending' | 'queued' } = {},
) {
  const columns = await kernel.storage.projects.columns(project.pk);
  const names = new Set(columns.map((c) => c.name));
  const errors: FieldError[] = columnNameProblems([input.name], columns.length, 'name');
  const steps: WaterfallStep[] = input.waterfall?.length
    ? input.waterfall
    : input.tool_id
      ? [{ tool_id: input.tool_id, config: input.config ?? {} }]
      : [];
  if (steps.length === 0) errors.push({ path: 'tool_id', message: `is required (or give waterfall steps); tools: ${knownTools(kernel)}` });
  if (input.waterfall?.length && input.tool_id && input.tool_id !== input.waterfall[0]?.tool_id) {
    errors.push({ path: 'tool_id', message: 'must be omitted or equal the first waterfall step' });
  }
  for (const [i, s] of steps.entries()) checkStep(kernel, s, input.waterfall?.length ? `waterfall[${i}]` : '', names, errors);
  errors.push(...configSizeProblems(steps, input.waterfall?.length ? 'waterfall' : 'config'));
  if (names.has(input.name)) errors.push({ path: 'name', message: `a column named "${input.name}" already exists` });
  if (steps.length > 1) {
    const fields = steps.map((s) => new Set(kernel.plugins.tool(s.tool_id)?.produces.map((p) => p.field) ?? []));
    const shared = [...(fields[0] ?? [])].filter((f) => fields.every((set) => set.has(f)));
    if (errors.length === 0 && shared.length === 0) {
      errors.push({ path: 'waterfall', message: 'steps must produce a common field (see each tool’s produces)' });
    }
  }
  if (input.order === 'auto' && steps.length < 2) {
    errors.push({ path: 'order', message: '"auto" orders the steps of a waterfall: give two steps or more' });
  }
  errors.push(...conditionProblems(input.run_condition));
  refuseColumnProblems(errors);
  const first = steps[0] as WaterfallStep;
  const column = await kernel.storage.projects.addColumn(project.pk, {
    name: input.name,
    type: 'tool',
    toolId: first.tool_id,
    config: first.config,
    autoRun: input.auto_run ?? false,
    runCondition: input.run_condition || null,
    waterfall: steps.length > 1 ? steps : null,
    maxCreditsPerRow: input.max_credits_per_row ?? null,
    stepOrder: input.order === 'auto' ? 'auto' : 'listed',
    ...(options.cellStatus ? { cellStatus: options.cellStatus } : {}),
  });
  return columnView(column, kernel.plugins);
}

/**
 * Which cells a run (re)starts, by `mode` (docs/enrichment.md): `pending` (never run, or stopped for lack of
 * credits), `failed` (ended in error), `empty` (every cell without a value: those, plus no_result and
 * skipped), `all` (every cell, completed ones too). Queued and running cells are never moved.
 */
export const RUN_MODES = {
  pending: ['pending', 'insufficient_credits'],
  failed: ['error'],
  empty: ['pending', 'insufficient_credits', 'error', 'no_result', 'skipped'],
  all: ['pending', 'insufficient_credits', 'error', 'no_result', 'skipped', 'completed'],
} as const satisfies Record<string, readonly CellStatus[]>;

export type RunMode = keyof typeof RUN_MODES;

/** Row ids named by one run: decimal sequence numbers of this project's live rows. */
const MAX_RUN_ROWS = 1000;

async function runRows(kernel: Kernel, project: Project, rowIds: string[]): Promise<number[]> {
  const seqs = [...new Set(rowIds)].map((id) => (/^[1-9]\d{0,15}$/.test(id) ? Number(id) : Number.NaN));
  const found = new Set(
    (
      await kernel.storage.rows.getMany(
        project.pk,
        seqs.filter((s) => Number.isSafeInteger(s)),
        [],
      )
    ).map((r) => r.seq),
  );
  const missing = [...new Set(rowIds)].filter((_id, i) => !found.has(seqs[i] as number));
  if (missing.length) {
    throw new ServiceError('not_found', {
      message: `No row ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''} in this project: nothing was run`,
      missing_row_ids: missing.slice(0, 100),
    });
  }
  return [...found];
}

/** What a run (or its estimate) covers: its tool columns, the cell statuses it moves, and its rows (all when undefined). */
export interface RunSelection {
  chosen: Column[];
  from: CellStatus[];
  rows: number[] | undefined;
}

/** Checks and resolves a run's col_ids, mode and row_ids (422 / 404 before anything happens). */
export async function runSelection(
  kernel: Kernel,
  project: Project,
  input: { col_ids?: string[]; include_errors?: boolean; mode?: RunMode; row_ids?: string[] },
): Promise<RunSelection> {
  const columns = (await kernel.storage.projects.columns(project.pk)).filter((c) => c.type === 'tool');
  let chosen = columns;
  if (input.col_ids) {
    const byId = new Map(columns.map((c) => [c.id, c]));
    const unknown = input.col_ids.filter((id) => !byId.has(id));
    if (unknown.length) {
      throw validationError(
        `Not tool columns of this project: ${unknown.join(', ')}`,
        unknown.map((id) => ({ path: 'col_ids', message: `"${id}" is not a tool column of this project` })),
      );
    }
    chosen = input.col_ids.map((id) => byId.get(id) as Column);
  }
  if (input.mode !== undefined && !Object.hasOwn(RUN_MODES, input.mode)) {
    throw validationError(`Unknown mode "${String(input.mode)}"; use one of: ${Object.keys(RUN_MODES).join(', ')}`, [
      { path: 'mode', message: `must be one of: ${Object.keys(RUN_MODES).join(', ')}` },
    ]);
  }
  if (input.row_ids !== undefined && input.row_ids.length > MAX_RUN_ROWS) {
    throw validationError(`row_ids names ${input.row_ids.length} rows; one run takes at most ${MAX_RUN_ROWS}`, [
      { path: 'row_ids', message: `at most ${MAX_RUN_ROWS} row ids` },
    ]);
  }
  const rows = input.row_ids === undefined ? undefined : await runRows(kernel, project, input.row_ids);
  // include_errors (the older switch) adds failed cells to the mode's.
  const from: CellStatus[] = [...RUN_MODES[input.mode ?? 'pending'], ...(input.include_errors ? (['error'] as const) : [])];
  return { chosen, from, rows };
}

/**
 * Queues the cells of the given tool columns (all tool columns by default) that the mode names,
 * in every row or in `row_ids` only. Cells already queued or running are left alone, so calling it
 * twice does not run anything twice. Everything is checked before anything is queued.
 */
export async function runColumns(
  kernel: Kernel,
  project: Project,
  input: { col_ids?: string[]; include_errors?: boolean; mode?: RunMode; row_ids?: string[]; max_credits?: number },
  keyId?: string,
) {
  if (input.max_credits !== undefined && !(Number.isSafeInteger(input.max_credits) && input.max_credits > 0)) {
    throw validationError(`max_credits is ${input.max_credits}; a run's cap is a whole number of credits above 0`, [
      { path: 'max_credits', message: 'must be a whole number above 0' },
    ]);
  }
  const { chosen, from, rows } = await runSelection(kernel, project, input);
  // One run for every cell this call queues, in every column: its cap and key go with the cells.
  const runId = await startRun(kernel, project.workspaceId, {
    ...(input.max_credits !== undefined ? { cap: input.max_credits } : {}),
    ...(keyId ? { keyId } : {}),
  });
  let queued = 0;
  for (const c of chosen) {
    if (rows?.length === 0) break;
    const seqs = await writeStartingJobs(
      kernel,
      (moved: number[]) => enrichmentJobs(kernel, project, c, moved),
      (jobs) => kernel.storage.rows.moveStatus(project.pk, c.no, from, 'queued', rows, jobs, runId ?? null),
    );
    queued += seqs.length;
  }
  return { queued, ...(input.max_credits !== undefined ? { max_credits: input.max_credits } : {}) };
}

/**
 * DELETE …/columns/{col_id}: the column goes, with its values; a column that the unique key or
 * another column's config still names is a 409 saying what to change first (nothing changes).
 * The deletion is a project event: every process stops the work it runs for the column.
 */
export async function deleteColumn(kernel: Kernel, project: Project, colId: string): Promise<{ deleted: true }> {
  const columns = await kernel.storage.projects.columns(project);
  const column = columns.find((c) => c.id === colId);
  if (!column) throw new ServiceError('not_found', `Column ${colId} not found in this project (list_columns names them)`);
  if (project.settings.uniqueColumns.includes(column.name)) {
    throw new ServiceError('conflict', {
      message: `"${column.name}" is in the project's unique key: take it out first (update_project_settings)`,
      unique_columns: project.settings.uniqueColumns,
    });
  }
  const readers = columns.filter((c) => c.id !== colId && c.type === 'tool' && columnsReadBy(c).has(column.name)).map((c) => c.name);
  if (readers.length) {
    throw new ServiceError('conflict', {
      message: `${readers.map((n) => `"${n}"`).join(', ')} read${readers.length === 1 ? 's' : ''} "${column.name}": delete or change ${readers.length === 1 ? 'it' : 'them'} first`,
      read_by: readers,
    });
  }
  if (!(await kernel.storage.projects.deleteColumn(project.pk, column.no))) {
    throw new ServiceError('not_found', `Column ${colId} not found in this project (deleted meanwhile)`);
  }
  return { deleted: true };
}
