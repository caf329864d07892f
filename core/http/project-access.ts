import { ServiceError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Project, Workspace } from '../model.ts';
import { admitCall } from '../services/admission.ts';
import { authenticateFor } from '../services/api-keys.ts';
import { sessionOf } from '../services/sessions.ts';

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
