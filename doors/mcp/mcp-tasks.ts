import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Kernel } from '../../core/kernel.ts';
import type { Project } from '../../core/model.ts';
import { cancelTask, startTask, type TaskView, viewTask } from '../../core/services/work-tasks.ts';
import { success, toolResult } from './envelope.ts';
import { callerOf } from './mcp-auth.ts';
import { RpcError } from './operation-call.ts';

/**
 * MCP's Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28 era): a call that starts long
 * work — run_builder, run_pending_columns — answers a task handle at once when the client declared
 * the extension; the client polls `tasks/get` (status, progress in words, then the result) and may
 * `tasks/cancel`. Tasks are stored records read against the project (core/services/work-tasks.ts).
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The result `_meta` key naming the task's project. */
export const PROJECT_META = 'workflow-service/project_id';
/** How often a client is asked to poll. */
const POLL_INTERVAL_MS = 1_000;

/** Whether the client's capabilities (its request envelope's) declare the extension. */
export function wantsTasks(capabilities: unknown): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return typeof extensions?.[TASKS_EXTENSION] === 'object' && extensions[TASKS_EXTENSION] !== null;
}

function taskFields(view: TaskView) {
  return {
    taskId: view.task.id,
    status: view.status,
    statusMessage: view.message,
    createdAt: new Date(view.task.createdAt).toISOString(),
    lastUpdatedAt: new Date(Math.max(view.task.cancelledAt ?? 0, view.project.updatedAt ?? view.task.createdAt)).toISOString(),
    ttlMs: view.task.expiresAt - view.task.createdAt,
    pollIntervalMs: POLL_INTERVAL_MS,
    // The project the work is on, while it runs (a builder run's is new to the caller).
    _meta: { [PROJECT_META]: view.project.id },
  };
}

/** What tasks/get and tasks/cancel answer: the task, with its result once completed or its error once failed. */
function detailed(view: TaskView) {
  const fields = taskFields(view);
  if (view.status === 'completed') {
    return { ...fields, result: toolResult(success({ project_id: view.project.id, ...view.state })) };
  }
  if (view.status === 'failed') return { ...fields, error: { code: -32603, message: view.error ?? 'the work failed' } };
  return fields;
}

/** The answer of a tools/call that started work: its task handle (`content` stays, empty, for clients that read it). */
export async function taskHandle(
  kernel: Kernel,
  project: Project,
  work: { kind: 'builder' | 'columns'; colIds?: string[]; total: number },
) {
  const task = await startTask(kernel, project, work);
  const view = await viewTask(kernel, project.workspaceId, task.id);
  if (!view) throw new Error('a task just started could not be read');
  return { resultType: 'task', ...taskFields(view), content: [] };
}

const notFound = (id: string) =>
  new RpcError(-32602, `Task "${id.length > 64 ? `${id.slice(0, 64)}…` : id}" not found (unknown, expired, or another workspace's)`);

function workspaceOf(authInfo: AuthInfo | undefined): string | undefined {
  return callerOf(authInfo).workspace?.id;
}

export async function getTask(kernel: Kernel, authInfo: AuthInfo | undefined, taskId: string) {
  const workspaceId = workspaceOf(authInfo);
  const view = workspaceId ? await viewTask(kernel, workspaceId, taskId) : undefined;
  if (!view) throw notFound(taskId);
  return detailed(view);
}

export async function cancelWorkTask(kernel: Kernel, authInfo: AuthInfo | undefined, taskId: string) {
  const workspaceId = workspaceOf(authInfo);
  const view = workspaceId ? await cancelTask(kernel, workspaceId, taskId) : undefined;
  if (!view) throw notFound(taskId);
  return detailed(view);
}
