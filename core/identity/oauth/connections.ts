import { ServiceError } from '../../errors.ts';
import type { FoundSession } from '../../ports/storage.ts';
import type { OAuthServer } from './oauth-server.ts';

/**
 * A person's connected applications in the session's workspace (Settings → Connected apps): each
 * a grant of the built-in authorization server. Revoking one stops its refresh token at once and
 * its access tokens within 15 s (at once on this process).
 */
export async function listConnections(server: OAuthServer, found: FoundSession) {
  const grants = await server.repo.grantsOf(found.user.id, found.workspace.id);
  return {
    connections: grants.map((g) => ({
      id: g.id,
      client_id: g.clientId,
      client_name: g.clientName,
      scope: g.scope,
      resource: g.resource,
      connected_at: new Date(g.createdAt).toISOString(),
      last_used_at: new Date(g.lastUsedAt).toISOString(),
    })),
  };
}

/** Another person's grant, or one of another workspace, reads as missing. */
export async function revokeConnection(server: OAuthServer, found: FoundSession, id: string): Promise<void> {
  const grant = await server.repo.getGrant(id);
  if (!grant || grant.userId !== found.user.id || grant.workspaceId !== found.workspace.id || grant.revokedAt !== null) {
    throw new ServiceError('not_found', `No connected application ${id} of yours in this workspace`);
  }
  await server.revokeGrant(id);
}
