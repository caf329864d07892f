import { ServiceError } from '../../core/errors.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Project, Workspace } from '../../core/model.ts';
import { admitCall } from '../../core/services/admission.ts';
import { authenticateFor } from '../../core/identity/api-keys.ts';
import { CSRF_HEADER, csrfMatches, csrfRefusal, sessionOf } from '../../core/identity/sessions.ts';

/**
 * The caller of a route outside the operation table: by the service-api-key header, or a console
 * session (with its CSRF token on a write). With `projectId`, the caller's live project of that id
 * comes in the same read as the key (null: none in this workspace).
 */
async function callerOf(kernel: Kernel, request: Request, options: { write: boolean; projectId?: string }) {
  const apiKey = request.headers.get('service-api-key');
  if (apiKey !== null) {
    const found = await authenticateFor(kernel.storage.workspaces, apiKey, options.projectId);
    return { workspace: found.workspace, rateKey: found.rateKey, keyId: found.keyId as string | undefined, project: found.project };
  }
  const session = await sessionOf(kernel, request.headers.get('cookie'));
  if (!session) throw new ServiceError('unauthorized', 'Missing API key: send it in the service-api-key header (or sign in at /login)');
  if (options.write && !csrfMatches(session, request.headers.get(CSRF_HEADER))) throw csrfRefusal();
  const project =
    options.projectId === undefined ? undefined : ((await kernel.storage.projects.get(session.workspace.id, options.projectId)) ?? null);
  return { workspace: session.workspace, rateKey: `user:${session.user.id}`, keyId: undefined, project };
}

/** The caller of a workspace route outside the operation table (an upload, a write), admitted like any call (plan, rate). */
export async function workspaceOfCaller(kernel: Kernel, request: Request): Promise<{ workspace: Workspace; keyId?: string }> {
  const { workspace, rateKey, keyId } = await callerOf(kernel, request, { write: true });
  await admitCall(kernel, workspace, rateKey);
  return { workspace, keyId };
}

/**
 * The caller of a project route outside the operation table (a stream, a download), admitted like
 * any call (plan, rate); another workspace's project is a 404.
 */
export async function projectOfCaller(
  kernel: Kernel,
  request: Request,
  projectId: string,
): Promise<{ workspace: Workspace; project: Project }> {
  const { workspace, rateKey, project } = await callerOf(kernel, request, { write: false, projectId });
  if (!project) throw new ServiceError('not_found', `Project ${projectId} not found (or not in this workspace)`);
  await admitCall(kernel, workspace, rateKey);
  return { workspace, project };
}
