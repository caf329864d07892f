import { plainFieldError, plainMessage } from './words.ts';

/** How the console talks to the service: the same REST operations as any client, with the session's cookie and CSRF token. */

export interface Boot {
  basePath: string;
  mcpUrl: string;
}

export interface Session {
  user: { id: string; email: string };
  workspace: { id: string; name: string; plan: string };
  role: 'owner' | 'admin' | 'member';
  csrf_token: string;
}

export const boot: Boot = JSON.parse(document.getElementById('boot')?.textContent ?? '{}');

let current: Session | undefined;

export function session(): Session {
  if (!current) throw new Error('no session yet');
  return current;
}

/** The signed-in session, or off to the sign-in page (coming back here after). */
export async function loadSession(): Promise<Session | undefined> {
  const r = await fetch('/session', { headers: { accept: 'application/json' } });
  if (r.status === 401) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    return undefined;
  }
  current = (await r.json()) as Session;
  return current;
}

/** A failed call: the service's `detail` as a sentence, its field errors by path, and the whole `detail` (a 409's duplicates…). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Record<string, string> = {},
    readonly detail: unknown = undefined,
  ) {
    super(message);
  }
}

async function call<T>(url: string, method: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = session().csrf_token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 401) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    throw new ApiError(401, 'Signed out: sign in again');
  }
  const text = await r.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!r.ok) {
    const detail = parsed?.detail;
    const fields: Record<string, string> = {};
    for (const e of detail?.errors ?? []) fields[e.path] = plainFieldError(e.message);
    const said = typeof detail === 'string' ? detail : detail?.message;
    // Field errors, named as the forms name their fields ("form_data.max_results" → "Max results").
    // (an error of the whole request, path "" or "(root)", is the message's own: it says it better)
    const named = Object.entries(fields)
      .filter(([path]) => path !== '' && !path.startsWith('('))
      .map(([path, m]) => {
        const last = (path.split('.').pop() ?? path).replace(/\[\d+\]$/, '').replace(/_/g, ' ');
        return `${last.charAt(0).toUpperCase()}${last.slice(1)}: ${m}`;
      });
    // The service's sentence, unless it is only the list of those field errors in schema words.
    const schemaList = !said || /^Invalid (body|query|params|path)\b|^form_data does not fit builder/.test(said);
    const message =
      named.length && schemaList
        ? named.join(' ')
        : said
          ? plainMessage(said)
          : `The service answered ${r.status}: try again, or reload the page.`;
    throw new ApiError(r.status, message, fields, detail);
  }
  return parsed as T;
}

/** A REST operation under BASE_PATH. */
export const api = <T>(method: string, path: string, body?: unknown) => call<T>(boot.basePath + path, method, body);

/** The console's own routes (/account/…). */
export const account = <T>(method: string, path: string, body?: unknown) => call<T>(`/account${path}`, method, body);
