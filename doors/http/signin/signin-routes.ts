import { PAGE_HEADERS } from '../page-headers.ts';
import { ServiceError } from '../../../core/errors.ts';
import { parseJsonExactly } from '../../../core/schema/exact-json.ts';
import type { RouteContext, RouteSpec } from '../route-chain.ts';
import type { Kernel } from '../../../core/kernel.ts';
import type { FoundSession } from '../../../core/ports/storage.ts';
import { CSRF_HEADER, csrfMatches, csrfRefusal, sessionCookie, sessionOf, signIn, signOut } from '../../../core/identity/sessions.ts';
import { BodyTooLarge, readTextLimited } from '../request-checks.ts';
import { loginPage } from './login-page.ts';

/** A sign-in form or JSON body is small; anything larger is refused unread. */
const MAX_FORM_BYTES = 16_384;

/** Whether the text holds a control character (C0, DEL) or a space. */
function hasControlOrSpace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Where to go after signing in: a path of this site only (never `//host` or a full URL). */
export function safeNext(raw: string | null | undefined): string {
  // Browsers drop tabs and line breaks from a URL and read \ as /: "/\t/evil.test" is "//evil.test".
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || hasControlOrSpace(raw)) return '/';
  let url: URL;
  try {
    url = new URL(raw, 'http://same-origin.invalid');
  } catch {
    return '/';
  }
  return url.origin === 'http://same-origin.invalid' ? url.pathname + url.search + url.hash : '/';
}

/** The client's address: the socket's, or with TRUST_PROXY the one the proxy appended to X-Forwarded-For. */
export function clientAddress(
  kernel: Kernel,
  request: Request,
  server: { requestIP(r: Request): { address: string } | null } | null,
): string {
  if (kernel.config.trustProxy) {
    const hops = (request.headers.get('x-forwarded-for') ?? '').split(',').map((s) => s.trim());
    const last = hops[hops.length - 1];
    if (last) return last;
  }
  return server?.requestIP(request)?.address ?? 'unknown';
}

/** A browser's POST from another site carries that site's Origin: refused (login CSRF). */
export function sameOrigin(kernel: Kernel, request: Request): boolean {
  const origin = request.headers.get('origin');
  if (!origin) return true;
  const own = [new URL(request.url).origin, kernel.config.publicUrl && new URL(kernel.config.publicUrl).origin];
  return own.includes(origin);
}

async function readForm(request: Request): Promise<{ fields: Record<string, unknown>; json: boolean }> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  const json = type === 'application/json';
  if (!json && type !== 'application/x-www-form-urlencoded') {
    throw new ServiceError('unsupported_media_type', 'Send the form (application/x-www-form-urlencoded) or JSON (application/json)');
  }
  const text = await readTextLimited(request, MAX_FORM_BYTES).catch((e) => {
    throw e instanceof BodyTooLarge ? new ServiceError('payload_too_large', `The body is over ${MAX_FORM_BYTES} bytes`) : e;
  });
  if (json) {
    let body: unknown;
    try {
      body = parseJsonExactly(text).value;
    } catch {
      throw new ServiceError('parse_error', 'The body is not valid JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ServiceError('parse_error', 'Send a JSON object');
    return { fields: body as Record<string, unknown>, json };
  }
  return { fields: Object.fromEntries(new URLSearchParams(text)), json };
}

const html = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...PAGE_HEADERS, ...headers } });

/** What the console learns about its session (GET /session, and POST /login as JSON). */
export function sessionAnswer(found: FoundSession) {
  return {
    user: { id: found.user.id, email: found.user.email },
    workspace: { id: found.workspace.id, name: found.workspace.name, plan: found.workspace.plan },
    role: found.role,
    csrf_token: found.session.csrfToken,
    expires_at: new Date(found.session.expiresAt).toISOString(),
  };
}

/** POST /login: a form (answered with pages) or JSON (answered with the session). */
async function login(ctx: RouteContext, secure: boolean): Promise<Response> {
  const { kernel, request } = ctx;
  let form: Awaited<ReturnType<typeof readForm>> = { fields: {}, json: true };
  try {
    if (!sameOrigin(kernel, request)) throw new ServiceError('forbidden', 'Sign in from this site’s own sign-in page');
    form = await readForm(request);
    const { token, found } = await signIn(kernel, {
      email: form.fields.email,
      password: form.fields.password,
      address: clientAddress(kernel, request, ctx.server),
    });
    const cookie = sessionCookie(token, secure);
    if (form.json) return Response.json(sessionAnswer(found), { headers: { 'set-cookie': cookie, 'cache-control': 'no-store' } });
    return new Response(null, { status: 303, headers: { location: safeNext(String(form.fields.next ?? '/')), 'set-cookie': cookie } });
  } catch (e) {
    // JSON callers get the chain's answer; a form gets its page again, saying what went wrong.
    if (form.json) throw e;
    const failure =
      e instanceof ServiceError ? e : new ServiceError('unavailable', 'Signing in is not possible right now; try again in a moment');
    const email = typeof form.fields.email === 'string' ? form.fields.email.slice(0, 254) : '';
    return html(
      loginPage({ error: failure.message, email, next: safeNext(String(form.fields.next ?? '/')) }),
      failure.status,
      failure.headers,
    );
  }
}

/** POST /logout: ends the session (its CSRF token in the header, or in the form of the console's button). */
async function logout(ctx: RouteContext, secure: boolean): Promise<Response> {
  const { kernel, request } = ctx;
  const found = await sessionOf(kernel, request.headers.get('cookie'));
  const type = request.headers.get('content-type') ?? '';
  const form = type.startsWith('application/x-www-form-urlencoded');
  if (found) {
    const presented =
      request.headers.get(CSRF_HEADER) ??
      (form ? new URLSearchParams(await readTextLimited(request, MAX_FORM_BYTES).catch(() => '')).get('csrf_token') : null);
    if (!csrfMatches(found, presented)) throw csrfRefusal();
    await signOut(kernel, found);
  }
  const cookie = sessionCookie(null, secure);
  return form
    ? new Response(null, { status: 303, headers: { location: '/login', 'set-cookie': cookie } })
    : new Response(null, { status: 204, headers: { 'set-cookie': cookie } });
}

/**
 * Sign-in for people (docs/console.md), outside BASE_PATH: `GET /login` (the form),
 * `POST /login` (form or JSON), `POST /logout`, `GET /session` (who is signed in, and the CSRF
 * token the console sends back on every state-changing request). The session is read by each
 * route itself: signing in needs none, signing out and /session answer without one.
 */
export function signinRoutes(kernel: Kernel): RouteSpec[] {
  const secure = kernel.config.publicUrl?.startsWith('https:') ?? false;
  const route = (method: RouteSpec['method'], path: string, handle: RouteSpec['handle']): RouteSpec => ({
    method,
    path,
    outsideBasePath: true,
    caller: 'none',
    handle,
  });
  return [
    route('GET', '/login', async ({ request }) => html(loginPage({ next: safeNext(new URL(request.url).searchParams.get('next')) }))),
    route('POST', '/login', (ctx) => login(ctx, secure)),
    route('POST', '/logout', (ctx) => logout(ctx, secure)),
    route('GET', '/session', async ({ request }) => {
      const found = await sessionOf(kernel, request.headers.get('cookie'));
      if (!found)
        return Response.json({ detail: 'Not signed in: sign in at /login' }, { status: 401, headers: { 'cache-control': 'no-store' } });
      return Response.json(sessionAnswer(found), { headers: { 'cache-control': 'no-store' } });
    }),
  ];
}
