import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { MissingRequiredClientCapabilityError } from '@modelcontextprotocol/server';
import type { Kernel } from '../../core/kernel.ts';
import type { Project } from '../../core/model.ts';
import { cancelTask, startTask, type TaskView, viewTask } from '../../core/services/work-tasks.ts';
import { failureEnvelope, success, toolResult } from './envelope.ts';
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

/**
 * What tasks/get answers: the task, with the call's result inlined once it ended. Work that ran and
 * failed (a builder run's error) is a completed task whose result is an error envelope (`isError`),
 * as the extension says; `failed` is kept for protocol errors, which this work does not raise.
 */
function detailed(view: TaskView) {
  const { status, ...fields } = taskFields(view);
  if (view.status === 'failed') {
    // As builder_status tells the failure: the builder's source (a provider, a file) gave out.
    const envelope = failureEnvelope({
      code: 'http_error',
      status: 502,
      detail: { message: view.error ?? 'the builder run failed', reason: 'builder_failed', project_id: view.project.id },
      headers: {},
    });
    return { ...fields, status: 'completed', result: toolResult(envelope) };
  }
  if (view.status === 'completed')
    return { ...fields, status, result: toolResult(success({ project_id: view.project.id, ...view.state })) };
  return { ...fields, status };
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

/** tasks/cancel: an empty acknowledgement, the same for a task that had ended already; the status shows in tasks/get. */
export async function cancelWorkTask(kernel: Kernel, authInfo: AuthInfo | undefined, taskId: string) {
  const workspaceId = workspaceOf(authInfo);
  const view = workspaceId ? await cancelTask(kernel, workspaceId, taskId) : undefined;
  if (!view) throw notFound(taskId);
  return {};
}

/** The task methods of a client that did not declare the extension: -32021 (HTTP 400), naming what to declare. */
export function requireTasks(capabilities: unknown): void {
  if (!wantsTasks(capabilities)) {
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }
}

/** tasks/update gives input to a task that asked for it; this server's tasks never do. */
export async function updateWorkTask(kernel: Kernel, authInfo: AuthInfo | undefined, taskId: string): Promise<never> {
  await getTask(kernel, authInfo, taskId); // unknown or another workspace's: not found
  throw new RpcError(-32602, `Task "${taskId}" is not waiting for input: this server's tasks never ask for any`);
}
