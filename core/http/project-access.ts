import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Project, Workspace } from '../model.ts';
import { admitCall } from '../services/admission.ts';
import { authenticateFor } from '../services/api-keys.ts';
import { CSRF_HEADER, csrfMatches, csrfRefusal, sessionOf } from '../services/sessions.ts';

/**
 * The caller of a workspace route outside the operation table (an upload): by the service-api-key
 * header, or a console session with its CSRF token (a write); admitted like any call (plan, rate).
 */
export async function workspaceOfCaller(kernel: Kernel, request: Request): Promise<{ workspace: Workspace; keyId?: string }> {
  const apiKey = request.headers.get('service-api-key');
  if (apiKey !== null) {
    const found = await authenticateFor(kernel.storage.workspaces, apiKey);
    await admitCall(kernel, found.workspace, found.rateKey);
    return { workspace: found.workspace, keyId: found.keyId };
  }
  const session = await sessionOf(kernel, request.headers.get('cookie'));
  if (!session) throw new ServiceError('unauthorized', 'Missing API key: send it in the service-api-key header (or sign in at /login)');
  if (!csrfMatches(session, request.headers.get(CSRF_HEADER))) throw csrfRefusal();
  await admitCall(kernel, session.workspace, `user:${session.user.id}`);
  return { workspace: session.workspace };
}

/**
 * The caller of a route outside the operation table (a stream, a download): by the service-api-key
 * header or a console session, admitted like any call (plan, rate); another workspace's project is a 404.
 */
export async function projectOfCaller(
  kernel: Kernel,
  request: Request,
  projectId: string,
): Promise<{ workspace: Workspace; project: Project }> {
  const apiKey = request.headers.get('service-api-key');
  let workspace: Workspace;
  let project: Project | null | undefined;
  let rateKey: string;
  if (apiKey !== null) {
    const found = await authenticateFor(kernel.storage.workspaces, apiKey, projectId);
    ({ workspace, rateKey } = found);
    project = found.project;
  } else {
    const session = await sessionOf(kernel, request.headers.get('cookie'));
    if (!session) throw new ServiceError('unauthorized', 'Missing API key: send it in the service-api-key header (or sign in at /login)');
    workspace = session.workspace;
    rateKey = `user:${session.user.id}`;
    project = await kernel.storage.projects.get(workspace.id, projectId);
  }
  if (!project) throw new ServiceError('not_found', `Project ${projectId} not found (or not in this workspace)`);
  await admitCall(kernel, workspace, rateKey);
  return { workspace, project };
}
