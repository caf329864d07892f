/**
 * CORS for browser clients of the REST door (CORS_ORIGINS; none by default, so a browser page of
 * another origin cannot read answers). Keys travel in a header, never in cookies, so credentials
 * mode stays off and `*` is safe to offer when configured.
 */

/** Headers a browser page may read from our answers. */
const EXPOSED = 'x-request-id, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset';
/** Request headers a page may send. */
const ALLOWED_HEADERS = 'content-type, service-api-key, idempotency-key, x-request-id';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export interface Cors {
  /** The headers to add to an answer to this origin (none when it is not allowed). */
  answerHeaders(origin: string | null): Record<string, string>;
  /** A preflight's headers for the methods the path answers (none when the origin is not allowed). */
  preflightHeaders(origin: string | null, methods: string[]): Record<string, string>;
}

/**
 * The OAuth endpoints that browser-based MCP clients call from their own origin (discovery,
 * registration, token, revocation, keys): open to every origin, since none reads a cookie.
 */
export const OPEN_CORS_HEADERS = 'content-type, authorization, mcp-protocol-version';

export function cors(origins: string[], allowedHeaders = ALLOWED_HEADERS): Cors {
  const any = origins.includes('*');
  const listed = new Set(origins);
  const allowOrigin = (origin: string | null): string | null => {
    if (origin === null) return null;
    if (any) return '*';
    return listed.has(origin) ? origin : null;
  };
  const answerHeaders = (origin: string | null): Record<string, string> => {
    const allowed = allowOrigin(origin);
    if (allowed === null) return {};
    return {
      'access-control-allow-origin': allowed,
      'access-control-expose-headers': EXPOSED,
      // The answer differs by Origin unless every origin is allowed: caches must keep them apart.
      ...(allowed === '*' ? {} : { vary: 'Origin' }),
    };
  };
  return {
    answerHeaders,
    preflightHeaders(origin, methods) {
      const headers = answerHeaders(origin);
      if (!headers['access-control-allow-origin']) return {};
      return {
        ...headers,
        'access-control-allow-methods': methods.join(', '),
        'access-control-allow-headers': allowedHeaders,
        'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
      };
    },
  };
}
