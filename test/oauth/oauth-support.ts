import { createHash, randomBytes } from 'node:crypto';
import { createUser } from '../../core/identity/accounts.ts';
import type { Storage } from '../../core/ports/storage.ts';

/** A PKCE pair (RFC 7636, S256). */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A person with a password, a member of `workspaceId` (or owner of a new workspace). */
export async function person(storage: Storage, email: string, workspaceId?: string) {
  const password = 'correct horse battery staple';
  const made = await createUser(storage, { email, password, workspaceId, newWorkspace: { plan: 'pro' } });
  return { ...made, email, password };
}

const unescapeHtml = (s: string) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));

/** The hidden fields of a page's form, as a browser would post them. */
export function hiddenFields(page: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const m of page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    fields[unescapeHtml(m[1] ?? '')] = unescapeHtml(m[2] ?? '');
  return fields;
}

/** What an error page says (its alert), or the start of the page. */
export const pageError = (html: string) => unescapeHtml(/role="alert">([^<]*)</.exec(html)?.[1] ?? html.slice(0, 300));

/** A browser reduced to what the flow needs: one cookie, forms posted with this site's Origin, no redirects followed. */
export class FormBrowser {
  cookie = '';
  constructor(readonly origin: string) {}

  async signIn(email: string, password: string): Promise<void> {
    const res = await fetch(`${this.origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.origin },
      body: new URLSearchParams({ email, password, next: '/' }),
    });
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
    this.cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  }

  get(url: string): Promise<Response> {
    return fetch(url, { redirect: 'manual', headers: this.cookie ? { cookie: this.cookie } : {} });
  }

  post(path: string, fields: Record<string, string>): Promise<Response> {
    return fetch(`${this.origin}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.origin,
        ...(this.cookie ? { cookie: this.cookie } : {}),
      },
      body: new URLSearchParams(fields),
    });
  }

  /** Opens an authorization URL, reads the consent page and answers it: the Location the server sends the browser to. */
  async consent(authorizeUrl: string, decision: 'allow' | 'deny', workspaceId?: string): Promise<URL> {
    const page = await this.get(authorizeUrl);
    const html = await page.text();
    if (page.status !== 200) {
      throw new Error(`the authorization page answered ${page.status}: ${page.headers.get('location') ?? pageError(html)}`);
    }
    const fields = hiddenFields(html);
    const answer = await this.post('/oauth/authorize', { ...fields, decision, ...(workspaceId ? { workspace_id: workspaceId } : {}) });
    const location = answer.headers.get('location');
    if (answer.status !== 303 || !location) throw new Error(`the consent answered ${answer.status}: ${pageError(await answer.text())}`);
    return new URL(location);
  }
}

/** POST a form to the token (or revocation) endpoint; answers the status and the JSON body. */
export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/**
 * A signed-in browser allows a client, and the client exchanges the code: what the token endpoint
 * answered, with the code and verifier (for tests that replay them).
 */
export async function allowAndExchange(
  browser: FormBrowser,
  o: { clientId: string; redirectUri: string; resource: string; workspaceId?: string; tokenFields?: Record<string, string> },
) {
  const { verifier, challenge } = pkce();
  const url = new URL(`${browser.origin}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: o.resource,
    scope: 'workflow',
    state: 'st-123',
  }))
    url.searchParams.set(k, v);
  const back = await browser.consent(url.href, 'allow', o.workspaceId);
  const code = back.searchParams.get('code') as string;
  const tokens = await postForm(`${browser.origin}/oauth/token`, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: o.redirectUri,
    client_id: o.clientId,
    code_verifier: verifier,
    resource: o.resource,
    ...o.tokenFields,
  });
  return { ...tokens, code, verifier };
}

/**
 * What a client application does to connect, with a person's consent given by form: registers,
 * has the person sign in and Allow, exchanges the code. Answers the client and its tokens.
 */
export async function connectAgent(origin: string, resource: string, who: { email: string; password: string }, clientName: string) {
  const redirectUri = 'http://127.0.0.1:43124/callback';
  const res = await fetch(`${origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: clientName, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  const client = (await res.json()) as { client_id: string };
  const browser = new FormBrowser(origin);
  await browser.signIn(who.email, who.password);
  const tokens = await allowAndExchange(browser, { clientId: client.client_id, redirectUri, resource });
  if (tokens.status !== 200) throw new Error(`the token endpoint answered ${tokens.status}: ${JSON.stringify(tokens.body)}`);
  return { client, tokens: tokens.body as { access_token: string; refresh_token: string } };
}
