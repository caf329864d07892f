import { ServiceError } from '../../core/errors.ts';
import { listConnections, revokeConnection } from '../../core/identity/oauth/connections.ts';
import * as admin from '../../core/identity/workspace-admin.ts';
import type { FoundSession } from '../../core/ports/storage.ts';
import type { RouteContext, RouteSpec } from './route-chain.ts';

/** Account bodies are a few fields: a larger one is a mistake or an attack. */
const MAX_BODY_BYTES = 16_384;

type Answer = (found: FoundSession, ctx: RouteContext) => Promise<unknown>;

/** The body as a JSON object (an empty body is `{}`). */
async function objectBody(ctx: RouteContext): Promise<Record<string, unknown>> {
  const body = await ctx.json(() => ({}));
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  throw new ServiceError('validation_error', 'Send a JSON object');
}

/** One account route: a console session only (CSRF on writes), answering JSON with `status` (204 when nothing). */
function accountRoute(method: RouteSpec['method'], path: string, status: number, answer: Answer, body = false): RouteSpec {
  return {
    method,
    path,
    outsideBasePath: true,
    caller: 'session',
    ...(body ? { body: 'json' as const, maxBodyBytes: MAX_BODY_BYTES } : {}),
    async handle(ctx) {
      const found = ctx.caller?.session as FoundSession;
      const out = await answer(found, ctx);
      return out === undefined
        ? new Response(null, { status: 204 })
        : Response.json(out, { status, headers: { 'cache-control': 'no-store' } });
    },
  };
}

/**
 * The console's own JSON routes (outside BASE_PATH, a signed-in session only, CSRF on every write):
 * the workspace's API keys and its members (docs/console.md, Settings → API keys and Settings →
 * Members), and the person's connected applications (docs/oauth.md, Settings → Connected apps). Not
 * API operations: a key cannot manage keys, and agents get no tool for it.
 */
export function accountRoutes(kernel: { storage: Parameters<typeof admin.listKeys>[0]; oauth: Parameters<typeof listConnections>[0] }) {
  const { storage } = kernel;
  const param = (ctx: RouteContext, name: string) => ctx.params[name] ?? '';
  return [
    accountRoute('GET', '/account/keys', 200, (found) => admin.listKeys(storage, found)),
    accountRoute('POST', '/account/keys', 201, async (found, ctx) => admin.createKey(storage, found, await objectBody(ctx)), true),
    accountRoute(
      'PUT',
      '/account/keys/{prefix}/cap',
      200,
      async (found, ctx) => admin.setKeyCap(storage, found, param(ctx, 'prefix'), await objectBody(ctx)),
      true,
    ),
    accountRoute('POST', '/account/keys/{prefix}/rotate', 201, (found, ctx) => admin.rotateKey(storage, found, param(ctx, 'prefix'))),
    accountRoute('DELETE', '/account/keys/{prefix}', 204, (found, ctx) => admin.revokeKey(storage, found, param(ctx, 'prefix'))),
    accountRoute('GET', '/account/ledger', 200, (found) => admin.ledger(storage, found)),
    accountRoute('GET', '/account/members', 200, (found) => admin.listMembers(storage, found)),
    accountRoute('POST', '/account/members', 202, async (found, ctx) => admin.addMember(storage, found, await objectBody(ctx)), true),
    accountRoute(
      'PATCH',
      '/account/members/{user_id}',
      200,
      async (found, ctx) => admin.setMemberRole(storage, found, param(ctx, 'user_id'), await objectBody(ctx)),
      true,
    ),
    accountRoute('DELETE', '/account/members/{user_id}', 204, (found, ctx) => admin.removeMember(storage, found, param(ctx, 'user_id'))),
    accountRoute('GET', '/account/invitations', 200, (found) => admin.myInvitations(storage, found)),
    accountRoute('POST', '/account/invitations/{id}/accept', 200, (found, ctx) => admin.acceptInvitation(storage, found, param(ctx, 'id'))),
    accountRoute('DELETE', '/account/invitations/{id}', 204, (found, ctx) => admin.dropInvitation(storage, found, param(ctx, 'id'))),
    accountRoute('GET', '/account/connections', 200, (found) => listConnections(kernel.oauth, found)),
    accountRoute('DELETE', '/account/connections/{grant_id}', 204, (found, ctx) =>
      revokeConnection(kernel.oauth, found, param(ctx, 'grant_id')),
    ),
  ];
}
