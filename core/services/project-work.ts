import { validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import type { Project } from '../model.ts';
import { checkFilterGroups } from '../rows/filter-parse.ts';

/** Cells that still have work ahead of them (pending cells wait for a run, not for a worker). */
const WORKING = ['queued', 'running'];
/** A project's state is read at most this often while something wakes the wait. */
const MIN_CHECK_MS = 250;
/** …and at least this often when nothing does (an event lost across processes costs this much). */
const MAX_CHECK_MS = 2_000;

/** Where a project's background work stands: its builder run, and its tool cells still queued or running. */
export interface WorkState {
  builder: { status: Project['builderStatus']; rows_created?: number; target?: number };
  /** Cells of the watched tool columns still queued or running. */
  cells_working: number;
  /** The project's rows now. */
  rows: number;
  ended: boolean;
}

/** How many cells of these tool columns are queued or running: one count of the row listing's filter. */
async function cellsWorking(kernel: Kernel, project: Project, colIds: string[] | undefined): Promise<number> {
  const columns = await kernel.storage.projects.columns(project.pk);
  const tools = columns.filter((c) => c.type === 'tool' && (colIds === undefined || colIds.includes(c.id)));
  if (tools.length === 0) return 0;
  const filter = checkFilterGroups(
    [{ type: 'or', rules: tools.map((c) => ({ col_id: c.id, field: 'status', operator: 'in', value: WORKING })) }],
    columns,
  );
  const { rows, total } = await kernel.storage.rows.page({
    projectPk: project.pk,
    toolCols: tools.map((c) => c.no),
    filter,
    sort: [],
    limit: 1,
    offset: 0,
  });
  // Whether any cell works is read from the rows themselves: a wait must end when the work has,
  // even if a remembered total lags behind (it is logged, to be found).
  if (rows.length === 0 && total > 0) log.warn('a remembered filtered total was stale', { project_id: project.id, total });
  return rows.length === 0 ? 0 : total;
}

export async function workState(kernel: Kernel, projectPk: number, colIds?: string[]): Promise<WorkState | undefined> {
  const project = await kernel.storage.projects.getByPk(projectPk);
  if (!project) return undefined;
  const building = project.builderStatus === 'queued' || project.builderStatus === 'running';
  const [working, counts] = await Promise.all([cellsWorking(kernel, project, colIds), kernel.storage.rows.counts([project.pk])]);
  return {
    builder: {
      status: project.builderStatus,
      ...(project.builderProgress ? { rows_created: project.builderProgress.rows_created, target: project.builderProgress.target } : {}),
    },
    cells_working: working,
    rows: counts.get(project.pk) ?? 0,
    ended: !building && working === 0,
  };
}

export interface WaitOptions {
  seconds: number;
  /** Tool columns to watch (default: every tool column). */
  colIds?: string[];
  /** Told as the work advances: done of total, in words. */
  onProgress?(progress: number, total: number | undefined, message: string): void;
  signal?: AbortSignal;
}

export interface WaitResult {
  /** Whether the work ended (false: the time passed first, or the project was deleted). */
  ended: boolean;
  waited_seconds: number;
  state: WorkState | undefined;
}

/**
 * Waits until a project's builder run and the cells of its tool columns have ended, or `seconds`
 * have passed — woken by the project's events (any process's writes), reading the state at most
 * every 250 ms and at least every 2 s. Progress is told as rows created of the target while the
 * builder runs, then as cells ended of those working when the builder had ended.
 */
export async function waitForWork(kernel: Kernel, projectPk: number, options: WaitOptions): Promise<WaitResult> {
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  let wake: (() => void) | undefined;
  const stopWatching = kernel.events.watch(projectPk, undefined, { onEvent: () => wake?.(), onReset: () => wake?.() });
  let state = await workState(kernel, projectPk, options.colIds);
  // Progress only grows (MCP requires it): rows created while the builder runs, then those rows
  // plus the cells ended since the cells' phase began (cells queued later raise the total).
  let rowsBase = 0;
  let sawBuilder = false;
  let cellsAtStart: number | undefined;
  let cellsEnded = 0;
  let told = -1;
  const tell = (s: WorkState) => {
    if (!options.onProgress) return;
    const building = s.builder.status === 'queued' || s.builder.status === 'running';
    let progress: number;
    let total: number | undefined;
    let message: string;
    if (building) {
      sawBuilder = true;
      rowsBase = Math.max(rowsBase, s.builder.rows_created ?? 0);
      [progress, total] = [rowsBase, s.builder.target];
      message = `builder ${s.builder.status}: ${rowsBase} rows created${s.builder.target ? ` of ${s.builder.target}` : ''}`;
    } else {
      // Once the run ended, the project's rows stand for what it created (its progress is written
      // per page, not after the last; a builder runs on a new project, so the rows are its own).
      if (sawBuilder) rowsBase = Math.max(rowsBase, s.rows);
      cellsAtStart ??= s.cells_working;
      cellsEnded = Math.max(cellsEnded, cellsAtStart - s.cells_working);
      const cellsTotal = Math.max(cellsAtStart, cellsEnded + s.cells_working);
      [progress, total] = [rowsBase + cellsEnded, rowsBase + cellsTotal];
      message = `${cellsEnded} of ${cellsTotal} cells ended`;
    }
    // Told when it grew (the first time too): MCP progress must increase from one notification to the next.
    if (progress > told) {
      told = progress;
      options.onProgress(progress, total, message);
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopWaiting: (() => void) | undefined;
  const onAbort = () => stopWaiting?.();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // A process told to stop (SIGTERM) answers its waits at its next check (within 2 s) rather than have them cut.
    while (state && !state.ended && Date.now() < deadline && !options.signal?.aborted && !kernel.lifecycle.draining) {
      tell(state);
      const remaining = deadline - Date.now();
      await new Promise<void>((resolve) => {
        stopWaiting = resolve;
        timer = setTimeout(resolve, Math.min(MAX_CHECK_MS, remaining));
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          timer = setTimeout(resolve, Math.min(MIN_CHECK_MS, Math.max(0, deadline - Date.now())));
        };
      });
      clearTimeout(timer);
      wake = undefined;
      state = await workState(kernel, projectPk, options.colIds);
    }
    // The last word of a wait that told anything: where the work ended (or stood when the time ran out).
    if (state && told >= 0) tell(state);
    return { ended: state?.ended ?? false, waited_seconds: Math.round((Date.now() - started) / 100) / 10, state };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    stopWatching();
  }
}

/**
 * The wait of `wait_for_project` (and of `wait_seconds` on run_builder / run_pending_columns):
 * `colIds`, when given, must name tool columns of the project.
 */
export async function waitOn(
  kernel: Kernel,
  project: Project,
  seconds: number,
  colIds: unknown,
  how: { progress?: WaitOptions['onProgress']; signal?: AbortSignal } = {},
) {
  let watched: string[] | undefined;
  if (colIds !== undefined) {
    const columns = await kernel.storage.projects.columns(project.pk);
    const tools = new Set(columns.filter((c) => c.type === 'tool').map((c) => c.id));
    if (!Array.isArray(colIds) || colIds.some((id) => typeof id !== 'string' || !tools.has(id))) {
      throw validationError('col_ids must be a JSON array of tool column ids of this project', [
        { path: 'col_ids', message: 'must name tool columns of this project (list_columns)' },
      ]);
    }
    watched = colIds as string[];
  }
  const release = seconds > 0 ? kernel.longRequests.take(project.workspaceId, 'wait') : () => {};
  let result: WaitResult;
  try {
    result = await waitForWork(kernel, project.pk, { seconds, colIds: watched, onProgress: how.progress, signal: how.signal });
  } finally {
    release();
  }
  const state = result.state ?? { builder: { status: project.builderStatus }, cells_working: 0, rows: 0, ended: false };
  return { ended: result.ended, waited_seconds: result.waited_seconds, builder: state.builder, cells_working: state.cells_working };
}
