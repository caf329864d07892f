import { createUser } from '../../../core/identity/accounts.ts';
import { need, workspaceOrFail } from '../args.ts';
import type { AdminCommand } from '../command.ts';
import { DEFAULT_WORKSPACE_CREDITS } from './workspace-create.ts';

export const userCreate: AdminCommand = {
  usage:
    'user:create --email E --password P [--workspace ID] [--role owner|admin|member]\n' +
    '                                  (without --workspace: a new workspace of their own, as owner)',
  async run({ values, storage }) {
    const workspaceId = typeof values.workspace === 'string' ? values.workspace : undefined;
    if (workspaceId !== undefined) await workspaceOrFail(storage, workspaceId);
    const { user, workspace, role } = await createUser(storage, {
      email: need(values, 'email'),
      password: need(values, 'password'),
      workspaceId,
      role: values.role,
      newWorkspace: { plan: 'pro' },
    });
    // A workspace of their own starts like one from workspace:create.
    if (workspaceId === undefined) await storage.credits.grant(workspace.id, DEFAULT_WORKSPACE_CREDITS, { note: 'user:create' });
    return { user_id: user.id, email: user.email, workspace_id: workspace.id, role };
  },
};
