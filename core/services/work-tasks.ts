import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import type { Project } from '../model.ts';
import type { WorkTask } from '../ports/storage.ts';
import { type WorkState, workState } from './project-work.ts';

/**
 * Long work handed to a caller as a task it polls (MCP's Tasks extension, docs/mcp.md): a builder
 * run, or a run of tool columns. The task is a stored record (so its id survives any restart and is
 * bound to its workspace); where the work stands is read from the project each time, so every
 * process answers the same.
 */

/** How long a task stays readable after it started. */
export const TASK_TTL_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;
let prunedAt = 0;

export type TaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

export interface TaskView {
  task: WorkTask;
  project: Project;
  status: TaskStatus;
  /** Progress in words: rows written, cells ended of total. */
  message: string;
  state: WorkState;
  /** Why a builder run failed. */
  error?: string;
}

export async function startTask(
  kernel: Kernel,
  project: Project,
  work: { kind: WorkTask['kind']; colIds?: string[]; total: number },
): Promise<WorkTask> {
  const now = Date.now();
  if (now - prunedAt > PRUNE_EVERY_MS) {
    prunedAt = now;
    void kernel.storage.tasks.prune(now).catch((e) => log.warn('could not prune expired tasks', { error: (e as Error).message }));
  }
  const task: WorkTask = {
    id: newId(),
    workspaceId: project.workspaceId,
    projectPk: project.pk,
    kind: work.kind,
    ...(work.colIds ? { colIds: work.colIds } : {}),
    total: work.total,
    cancelledAt: null,
    createdAt: now,
    expiresAt: now + TASK_TTL_MS,
  };
  await kernel.storage.tasks.create(task);
  return task;
}

function progressMessage(task: WorkTask, state: WorkState): string {
  if (task.kind === 'builder' && (state.builder.status === 'queued' || state.builder.status === 'running')) {
    const of = state.builder.target ? ` of ${state.builder.target}` : '';
    return `builder ${state.builder.status}: ${state.builder.rows_created ?? 0}${of} rows written`;
  }
  if (task.kind === 'columns' && task.total > 0) {
    return `${Math.max(0, task.total - state.cells_working)} of ${task.total} cells ended`;
  }
  return state.cells_working > 0 ? `${state.cells_working} cells queued or running` : `${state.rows} rows`;
}

/** The workspace's task and where its work stands (undefined: no such task, expired, or its project deleted). */
export async function viewTask(kernel: Kernel, workspaceId: string, id: string): Promise<TaskView | undefined> {
  const task = await kernel.storage.tasks.get(workspaceId, id);
  if (!task) return undefined;
  const project = await kernel.storage.projects.getByPk(task.projectPk);
  if (!project || project.workspaceId !== workspaceId) return undefined;
  const state = await workState(kernel, project.pk, task.kind === 'columns' ? task.colIds : undefined);
  if (!state) return undefined;
  const message = progressMessage(task, state);
  if (task.cancelledAt !== null || (task.kind === 'builder' && state.builder.status === 'cancelled')) {
    return { task, project, status: 'cancelled', message, state };
  }
  if (task.kind === 'builder' && state.builder.status === 'failed') {
    return { task, project, status: 'failed', message, state, error: project.builderError ?? 'the builder run failed' };
  }
  return { task, project, status: state.ended ? 'completed' : 'working', message, state };
}

/**
 * Stops a task's work: a builder run takes no more pages (the page being written is dropped, the
 * rows written stay, the reservation of rows not written comes back); cells of a column run not yet
 * started go back to `pending` (cells running finish, nothing more is charged). Answers the task
 * as it stands after.
 */
export async function cancelTask(kernel: Kernel, workspaceId: string, id: string): Promise<TaskView | undefined> {
  const view = await viewTask(kernel, workspaceId, id);
  if (view?.status !== 'working') return view;
  const { task, project } = view;
  if (task.kind === 'builder' && (project.builderStatus === 'queued' || project.builderStatus === 'running')) {
    await kernel.storage.projects.setBuilderState(project.pk, {
      builderStatus: 'cancelled',
      builderError: null,
      log: [...project.executionLog, { at: new Date().toISOString(), step: 'cancelled', message: 'run cancelled' }],
    });
  }
  const columns = await kernel.storage.projects.columns(project.pk);
  for (const c of columns) {
    if (c.type !== 'tool' || (task.colIds && !task.colIds.includes(c.id))) continue;
    await kernel.storage.rows.moveStatus(project.pk, c.no, ['queued'], 'pending');
  }
  await kernel.storage.tasks.markCancelled(task.id, Date.now());
  return viewTask(kernel, workspaceId, id);
}
