import { OAuthError } from './oauth-error.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes a redirect must never use: they run code or read files instead of reaching an application. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:']);

const isLoopback = (url: URL) => url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);

/**
 * A redirect URI a client may register: absolute, no fragment, and https — or http on a loopback
 * address, or a native application's private-use scheme (RFC 8252 §7.1, e.g. `cursor://…`).
 */
export function checkRedirectUri(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2000) {
    throw new OAuthError('invalid_redirect_uri', 'Each redirect URI is a string of 1 to 2000 characters');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthError('invalid_redirect_uri', `The redirect URI ${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (url.hash || raw.includes('#')) throw new OAuthError('invalid_redirect_uri', `The redirect URI ${raw} has a fragment (#…)`);
  if (FORBIDDEN_SCHEMES.has(url.protocol)) throw new OAuthError('invalid_redirect_uri', `A redirect URI cannot use ${url.protocol}`);
  if (url.protocol === 'http:' && !isLoopback(url)) {
    throw new OAuthError(
      'invalid_redirect_uri',
      `The redirect URI ${raw} uses http on a host that is not this machine: use https (http is for localhost, 127.0.0.1 and [::1] only)`,
    );
  }
  return raw;
}

/**
 * Whether a redirect URI of a request is one the client registered: the same string, except that
 * a loopback http redirect may name any port (RFC 8252 §7.3: native apps listen on a free port).
 */
export function redirectMatches(registered: string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let url: URL;
  try {
    url = new URL(presented);
  } catch {
    return false;
  }
  if (!isLoopback(url)) return false;
  const portless = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    try {
      const candidate = new URL(r);
      return isLoopback(candidate) && portless(candidate) === portless(url);
    } catch {
      return false;
    }
  });
}
