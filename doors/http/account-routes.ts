import { Elysia } from 'elysia';
import { ServiceError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { FoundSession } from '../../core/ports/storage.ts';
import { CSRF_HEADER, csrfMatches, csrfRefusal, sessionOf } from '../../core/identity/sessions.ts';
import { listConnections, revokeConnection } from '../../core/identity/oauth/connections.ts';
import * as admin from '../../core/identity/workspace-admin.ts';
import { errorResponse } from './error-response.ts';
import { BodyTooLarge, readTextLimited } from './request-checks.ts';

const MAX_BODY_BYTES = 16_384;

type Handler = (found: FoundSession, request: Request, params: Record<string, string>) => Promise<unknown>;

async function jsonBody(request: Request): Promise<Record<string, unknown>> {
  const text = await readTextLimited(request, MAX_BODY_BYTES).catch((e) => {
    throw e instanceof BodyTooLarge ? new ServiceError('payload_too_large', `The body is over ${MAX_BODY_BYTES} bytes`) : e;
  });
  if (!text) return {};
  try {
    const body = JSON.parse(text);
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {}
  throw new ServiceError('parse_error', 'Send a JSON object');
}

/**
 * The console's own JSON routes (outside BASE_PATH, a signed-in session only, CSRF on every write):
 * the workspace's API keys and its members (docs/console.md, Settings → Integrations → API and
 * Settings → Members), and the person's connected applications (docs/oauth.md, Settings → Connected apps). Not API operations: a key cannot manage keys, and agents get no tool for it.
 */
export function accountRoutes(kernel: Kernel) {
  const { storage } = kernel;
  const route =
    (status: number, handler: Handler, write = true) =>
    async ({ request, params }: { request: Request; params: Record<string, string> }) => {
      const requestId = newId();
      try {
        const found = await sessionOf(kernel, request.headers.get('cookie'));
        if (!found) throw new ServiceError('unauthorized', 'Sign in first (/login): keys and members are managed from a console session');
        if (write && !csrfMatches(found, request.headers.get(CSRF_HEADER))) throw csrfRefusal();
        const answer = await handler(found, request, params);
        return answer === undefined
          ? new Response(null, { status: 204 })
          : Response.json(answer, { status, headers: { 'cache-control': 'no-store' } });
      } catch (e) {
        return errorResponse(e, requestId);
      }
    };
  const hidden = { detail: { hide: true }, parse: 'none' as const };
  return new Elysia({ name: 'workflow-account' })
    .get(
      '/account/keys',
      route(200, (found) => admin.listKeys(storage, found), false),
      hidden,
    )
    .post(
      '/account/keys',
      route(201, async (found, r) => admin.createKey(storage, found, await jsonBody(r))),
      hidden,
    )
    .put(
      '/account/keys/:prefix/cap',
      route(200, async (found, r, p) => admin.setKeyCap(storage, found, p.prefix ?? '', await jsonBody(r))),
      hidden,
    )
    .post(
      '/account/keys/:prefix/rotate',
      route(201, (found, _r, p) => admin.rotateKey(storage, found, p.prefix ?? '')),
      hidden,
    )
    .delete(
      '/account/keys/:prefix',
      route(204, (found, _r, p) => admin.revokeKey(storage, found, p.prefix ?? '')),
      hidden,
    )
    .get(
      '/account/ledger',
      route(200, (found) => admin.ledger(storage, found), false),
      hidden,
    )
    .get(
      '/account/members',
      route(200, (found) => admin.listMembers(storage, found), false),
      hidden,
    )
    .post(
      '/account/members',
      route(202, async (found, r) => admin.addMember(storage, found, await jsonBody(r))),
      hidden,
    )
    .get(
      '/account/invitations',
      route(200, (found) => admin.myInvitations(storage, found), false),
      hidden,
    )
    .post(
      '/account/invitations/:id/accept',
      route(200, (found, _r, p) => admin.acceptInvitation(storage, found, p.id ?? '')),
      hidden,
    )
    .delete(
      '/account/invitations/:id',
      route(204, (found, _r, p) => admin.dropInvitation(storage, found, p.id ?? '')),
      hidden,
    )
    .patch(
      '/account/members/:user_id',
      route(200, async (found, r, p) => admin.setMemberRole(storage, found, p.user_id ?? '', await jsonBody(r))),
      hidden,
    )
    .delete(
      '/account/members/:user_id',
      route(204, (found, _r, p) => admin.removeMember(storage, found, p.user_id ?? '')),
      hidden,
    )
    .get(
      '/account/connections',
      route(200, (found) => listConnections(kernel.oauth, found), false),
      hidden,
    )
    .delete(
      '/account/connections/:grant_id',
      route(204, (found, _r, p) => revokeConnection(kernel.oauth, found, p.grant_id ?? '')),
      hidden,
    );
}
