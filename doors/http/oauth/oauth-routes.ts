import { PAGE_HEADERS } from '../page-headers.ts';
import { ServiceError } from '../../../core/errors.ts';
import { log } from '../../../core/log.ts';
import { allow, checkAuthorize, deny } from '../../../core/identity/oauth/authorize.ts';
import { isUrlClientId, registerClient } from '../../../core/identity/oauth/clients.ts';
import { OAUTH_PATHS, authorizationServerMetadata } from '../../../core/identity/oauth/issuer.ts';
import { OAuthError } from '../../../core/identity/oauth/oauth-error.ts';
import { revokeRequest, tokenRequest } from '../../../core/identity/oauth/token-endpoint.ts';
import { csrfMatches, sessionOf } from '../../../core/identity/sessions.ts';
import { parseJsonExactly } from '../../../core/schema/exact-json.ts';
import { BodyTooLarge, readTextLimited } from '../request-checks.ts';
import type { RouteContext, RouteSpec } from '../route-chain.ts';
import { clientAddress, sameOrigin } from '../signin/signin-routes.ts';
import { authorizeErrorPage, consentPage } from './consent-page.ts';

const MAX_BODY_BYTES = 16_384;
/** Open registration: a burst, then one client every 6 s per address. */
const REGISTRATIONS_PER_ADDRESS = { burst: 20, perSecond: 1 / 6 };
/** Authorizations naming a client by URL (each may fetch its metadata document), per client address. */
const DOCUMENT_FETCHES = { burst: 10, perSecond: 1 / 6 };

/** The paths that answer any origin (no cookie reaches them): discovery, keys, registration, token, revocation. */
export const OAUTH_OPEN_PATHS = new Set<string>([
  OAUTH_PATHS.metadata,
  OAUTH_PATHS.jwks,
  OAUTH_PATHS.register,
  OAUTH_PATHS.token,
  OAUTH_PATHS.revoke,
]);

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { ...NO_STORE, ...headers } });

const html = (body: string, status = 200) =>
  new Response(body, {
    status,
    headers: {
      ...NO_STORE,
      // Never framed (the consent page's Allow under a decoy button); no form-action: browsers apply it
      // to the redirect that follows the form, to the client's own address.
      ...PAGE_HEADERS,
      // Not no-referrer: Chromium then sends "Origin: null" with the consent form, which the origin check refuses.
      'referrer-policy': 'same-origin',
    },
  });

const seeOther = (location: string, status = 302) => new Response(null, { status, headers: { location, ...NO_STORE } });

/** An error of the JSON endpoints, as RFC 6749 §5.2 shapes it; anything unexpected is a server_error (logged). */
function failure(e: unknown, requestId: string): Response {
  if (e instanceof OAuthError) {
    return json(e.toJSON(), e.status, e.status === 401 ? { 'www-authenticate': 'Basic realm="oauth"' } : {});
  }
  if (e instanceof ServiceError) {
    const error = e.code === 'rate_limited' ? 'slow_down' : e.status >= 500 ? 'temporarily_unavailable' : 'invalid_request';
    return json({ error, error_description: e.message }, e.status, e.headers);
  }
  log.error('OAuth endpoint failed', { error: (e as Error).message, request_id: requestId });
  return json({ error: 'server_error', error_description: 'The server could not answer; try again' }, 500);
}

async function bodyText(request: Request): Promise<string> {
  const length = Number(request.headers.get('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) throw new OAuthError('invalid_request', `The body is over ${MAX_BODY_BYTES} bytes`);
  return readTextLimited(request, MAX_BODY_BYTES).catch((e) => {
    throw e instanceof BodyTooLarge ? new OAuthError('invalid_request', `The body is over ${MAX_BODY_BYTES} bytes`) : e;
  });
}

/** The token and revocation endpoints take a form (RFC 6749 §3.2). */
async function readForm(request: Request): Promise<URLSearchParams> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded');
  }
  return new URLSearchParams(await bodyText(request));
}

/** A failure of the authorization page: a page that says what happened (never a redirect to an unchecked client). */
function pageFailure(e: unknown, requestId: string): Response {
  if (e instanceof OAuthError) return html(authorizeErrorPage(e.description), e.status);
  log.error('OAuth authorization failed', { error: (e as Error).message, request_id: requestId });
  return html(authorizeErrorPage('The server could not answer; try again in a moment.'), 503);
}

function signInFirst(request: Request, posted: boolean): Response {
  if (posted) return html(authorizeErrorPage('Your sign-in ended before you answered. Start again from the application.'), 401);
  const url = new URL(request.url);
  return seeOther(`/login?next=${encodeURIComponent(url.pathname + url.search)}`);
}

/** GET shows the consent page to a signed-in person (sign-in first); POST is that page's answer. */
async function authorize(ctx: RouteContext, params: URLSearchParams, posted: boolean): Promise<Response> {
  const { kernel, request } = ctx;
  const server = kernel.oauth;
  const found = await sessionOf(kernel, request.headers.get('cookie'));
  const clientId = params.get('client_id') ?? '';
  if (isUrlClientId(clientId)) {
    // A client named by a URL is fetched only for a signed-in person, and only so often per address:
    // a stranger cannot make this server fetch addresses for them.
    if (!found) return signInFirst(request, posted);
    const address = clientAddress(kernel, request, ctx.server);
    const { waitMs } = await kernel.rateLimiter.take(`oauth:documents:${address}`, DOCUMENT_FETCHES, 1);
    if (waitMs > 0)
      return html(authorizeErrorPage('Too many sign-in attempts with client metadata documents; try again in a minute.'), 429);
  }
  const checked = await checkAuthorize(server, params);
  if (checked.kind === 'page') return html(authorizeErrorPage(checked.message), 400);
  // Sign-in comes first, errors included: anyone may register a client and its redirect URI, so
  // an error sent back before sign-in would make this site a redirector for strangers (RFC 9700 §4.11.2).
  if (!found) return signInFirst(request, posted);
  if (checked.kind === 'redirect') return seeOther(checked.location);
  const memberships = await kernel.storage.users.workspacesOf(found.user.id);
  if (!posted) {
    return html(
      consentPage({
        request: checked.request,
        email: found.user.email,
        workspaces: memberships.map((m) => m.workspace),
        selected: found.workspace.id,
        csrfToken: found.session.csrfToken,
      }),
    );
  }
  if (!sameOrigin(kernel, request) || !csrfMatches(found, params.get('csrf_token'))) {
    return html(authorizeErrorPage('This answer did not come from the consent page. Start again from the application.'), 403);
  }
  const decision = params.get('decision');
  if (decision === 'deny') return seeOther(deny(server, checked.request), 303);
  if (decision !== 'allow') return html(authorizeErrorPage('Choose Allow or Deny.'), 400);
  const chosen = memberships.find((m) => m.workspace.id === params.get('workspace_id'));
  if (!chosen) return html(authorizeErrorPage('Choose one of your workspaces.'), 400);
  return seeOther(await allow(server, checked.request, found.user.id, chosen.workspace.id), 303);
}

/** Open registration (RFC 7591), limited per client address. */
async function register(ctx: RouteContext): Promise<Response> {
  const { kernel, request } = ctx;
  const { waitMs } = await kernel.rateLimiter.take(
    `oauth:register:${clientAddress(kernel, request, ctx.server)}`,
    REGISTRATIONS_PER_ADDRESS,
  );
  if (waitMs > 0) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return json({ error: 'slow_down', error_description: `Too many registrations; retry in ${seconds} s` }, 429, {
      'retry-after': String(seconds),
    });
  }
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new OAuthError('invalid_client_metadata', 'Send the client metadata as application/json');
  let body: unknown;
  try {
    body = parseJsonExactly(await bodyText(request)).value;
  } catch (e) {
    if (e instanceof OAuthError) throw e;
    throw new OAuthError('invalid_client_metadata', 'The body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_client_metadata', 'Send a JSON object of client metadata (RFC 7591)');
  }
  return json(await registerClient(kernel.oauth.repo, body as Record<string, unknown>), 201);
}

/** One OAuth route: no caller (the client's own credentials, or the person's session, are checked by the endpoint). */
const oauthRoute = (
  method: RouteSpec['method'],
  path: string,
  handle: RouteSpec['handle'],
  answerFailure: RouteSpec['failure'] = failure,
): RouteSpec => ({ method, path, outsideBasePath: true, caller: 'none', failure: answerFailure, handle });

/**
 * The built-in OAuth 2.1 authorization server's routes (docs/oauth.md), at the root of the REST
 * host, whose PUBLIC_URL is the issuer. Its JSON endpoints answer RFC 6749 errors; the
 * authorization endpoint answers pages.
 */
export function oauthRoutes(): RouteSpec[] {
  return [
    oauthRoute('GET', OAUTH_PATHS.metadata, async ({ kernel }) =>
      json(authorizationServerMetadata(kernel.oauth.issuer, `${kernel.config.basePath}/docs`), 200, {
        'cache-control': 'public, max-age=3600',
      }),
    ),
    oauthRoute('GET', OAUTH_PATHS.jwks, async ({ kernel }) =>
      json(await kernel.oauth.keys.jwks(), 200, { 'cache-control': 'public, max-age=300' }),
    ),
    oauthRoute('GET', OAUTH_PATHS.authorize, (ctx) => authorize(ctx, new URL(ctx.request.url).searchParams, false), pageFailure),
    oauthRoute(
      'POST',
      OAUTH_PATHS.authorize,
      async (ctx) => {
        const type = (ctx.request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
        if (type !== 'application/x-www-form-urlencoded') return html(authorizeErrorPage('Answer from the consent page.'), 415);
        return authorize(ctx, new URLSearchParams(await bodyText(ctx.request)), true);
      },
      pageFailure,
    ),
    oauthRoute('POST', OAUTH_PATHS.register, register),
    oauthRoute('POST', OAUTH_PATHS.token, async ({ kernel, request }) =>
      json(await tokenRequest(kernel.oauth, await readForm(request), request.headers.get('authorization'))),
    ),
    oauthRoute('POST', OAUTH_PATHS.revoke, async ({ kernel, request }) => {
      await revokeRequest(kernel.oauth, await readForm(request), request.headers.get('authorization'));
      return new Response(null, { status: 200, headers: NO_STORE });
    }),
  ];
}
