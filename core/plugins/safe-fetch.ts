import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { readLimited } from '../read-limited.ts';

/**
 * Outbound HTTP for plugins. Plugins fetch URLs that users type or that rows carry, so every
 * request could be aimed at the service's own network (SSRF). Each hop — the first request and
 * every redirect — resolves the host name, refuses it if any of its addresses is not public
 * (unless ALLOW_PRIVATE_NETWORK opens it), and then connects to the address it checked, so a DNS
 * answer that changes between the check and the connection (rebinding) cannot slip through:
 * plain http is sent to the checked IP with the original Host header; https goes by name, where a
 * rebound address would fail the certificate check anyway. Bodies are read under a byte limit and
 * the whole exchange under a time limit. Errors name the host only, never a path or query (which
 * may carry a key), and never an address the host resolved to: a refusal reads the same whether the
 * name resolves to a private address or to none, so tenants cannot map the internal network.
 */

// ─── Which addresses may be reached ─────────────────────────────────────────────────────────────

type Net = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * ALLOW_PRIVATE_NETWORK, read from process.env on every call so a test or an operator's change
 * takes effect at once: unset / `0` / `false` → public addresses only; `1` / `true` → everything
 * (tests, trusted setups); a comma list of CIDRs or addresses (`10.1.2.0/24,127.0.0.1`) → public
 * addresses plus just those (an internal API gateway, say).
 */
export function privateAllowance(raw = process.env.ALLOW_PRIVATE_NETWORK): 'none' | 'all' | Net[] {
  const value = raw?.trim().toLowerCase() ?? '';
  if (value === '' || value === '0' || value === 'false') return 'none';
  if (value === '1' || value === 'true') return 'all';
  return value.split(',').map((part): Net => {
    const entry = part.trim();
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const ip = ipaddr.process(entry);
      return [ip, ip.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw new Error(`ALLOW_PRIVATE_NETWORK: "${entry}" is neither 1, true, an address nor a CIDR`);
    }
  });
}

/** IPv6 space routed on the public internet (2000::/3); everything else is reserved or local. */
const GLOBAL_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Why an address is not public, or null when it is. ipaddr.js names the special ranges (loopback,
 * private, linkLocal, carrierGradeNat, uniqueLocal, unspecified, broadcast, reserved, 6to4,
 * teredo, NAT64 …), so no CIDR table is kept here: anything but plain `unicast` is refused.
 * `process` turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it carries.
 */
export function nonPublicReason(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return 'not an IP address';
  }
  const range = ip.range();
  if (range !== 'unicast') return range;
  if (ip.kind() === 'ipv6' && !(ip as ipaddr.IPv6).match(GLOBAL_V6)) return 'reserved'; // e.g. ::7f00:1
  return null;
}

/** Why this address may not be reached now, or null when it may. */
export function blockedReason(address: string, allowance = privateAllowance()): string | null {
  const reason = nonPublicReason(address);
  if (reason === null || reason === 'not an IP address' || allowance === 'none') return reason;
  if (allowance === 'all') return null;
  const ip = ipaddr.process(address);
  return allowance.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net as never, bits)) ? null : reason;
}

// ─── Errors ─────────────────────────────────────────────────────────────────────────────────────

/** The URL points at an address plugins may not reach, or is not http(s). Never worth a retry. */
export class BlockedUrlError extends Error {
  override name = 'BlockedUrlError';
}

/**
 * The request cannot be sent as asked (a header value with a line break, say — row data rendered
 * into a header must not inject another one). Never worth a retry; nothing was sent.
 */
export class InvalidRequestError extends Error {
  override name = 'InvalidRequestError';
}

/** The body grew past `maxBytes`; reading stopped there. */
export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
}

/** The exchange (all hops and the body) took longer than `timeoutMs`. Worth a retry. */
export class FetchTimeoutError extends Error {
  override name = 'FetchTimeoutError';
}

/** Too many redirects, or a redirect without a usable Location. */
export class RedirectError extends Error {
  override name = 'RedirectError';
}

// ─── Fetching ───────────────────────────────────────────────────────────────────────────────────

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** The caller's cancellation (a job's signal). */
  signal?: AbortSignal;
  /** Limit of the whole exchange: every hop and the body (default 15 s). */
  timeoutMs?: number;
  /** Largest body read, after decompression (default 5 MiB). */
  maxBytes?: number;
  /** Past maxBytes: `fail` (ResponseTooLargeError, the default) or `cut` (keep the first maxBytes; the status is what counts). */
  pastMaxBytes?: 'fail' | 'cut';
  /** Redirects followed before giving up (default 5; 0 = answer the 3xx as it is). */
  maxRedirects?: number;
}

export interface SafeResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  /** The URLs that redirected, in order. */
  redirects: string[];
  body: Uint8Array;
  text(): string;
}

export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that carry no credential and may follow a redirect to another origin. */
const PORTABLE_HEADERS = new Set(['accept', 'accept-language', 'user-agent', 'content-type']);

/** Races a promise that cannot be cancelled (a DNS lookup) against the signal. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A header name as HTTP defines it (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Refuses headers fetch would refuse (or, worse, that would split the request): names that are not
 * tokens, values with CR, LF or NUL, characters beyond Latin-1. The message names the header, never
 * its value (which may be a key).
 */
export function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    const shown = JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
    if (!HEADER_NAME.test(name)) throw new InvalidRequestError(`header name ${shown} is not a valid header name`);
    const text = String(value);
    if (/[\r\n]/.test(text)) throw new InvalidRequestError(`header ${name} contains a line break, which a header value cannot hold`);
    if (text.includes('\0')) throw new InvalidRequestError(`header ${name} contains a NUL character, which a header value cannot hold`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the range names every Latin-1 character, controls included
    if (/[^\u0000-\u00ff]/.test(text))
      throw new InvalidRequestError(
        `header ${name} contains characters a header value cannot carry (only Latin-1); encode the value first`,
      );
  }
}

/** The one refusal of an address, whatever the reason: names what the tenant gave, never an IP. */
function refusal(hostname: string, isLiteral: boolean): BlockedUrlError {
  const what = isLiteral ? hostname : `${hostname} has no public address`;
  return new BlockedUrlError(
    `refused: private or reserved address (${what}); an operator may allow private addresses with ALLOW_PRIVATE_NETWORK`,
  );
}

/**
 * The host's addresses, each checked; throws BlockedUrlError when one is refused. A name that does
 * not resolve is refused with the same words as one that resolves to a private address (unless
 * everything is allowed): otherwise the difference would tell which internal names exist.
 */
export async function checkedAddresses(hostname: string, signal: AbortSignal): Promise<string[]> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const allowance = privateAllowance();
  const literal = ipaddr.isValid(bare);
  let addresses: string[];
  if (literal) addresses = [bare];
  else {
    try {
      addresses = (await abortable(lookup(bare, { all: true, verbatim: true }), signal)).map((a) => a.address);
    } catch (e) {
      if (signal.aborted) throw e;
      if (allowance === 'all')
        throw new BlockedUrlError(`cannot resolve ${bare}: ${(e as { code?: string }).code ?? (e as Error).message}`);
      throw refusal(bare, false);
    }
  }
  if (addresses.length === 0) throw allowance === 'all' ? new BlockedUrlError(`cannot resolve ${bare}`) : refusal(bare, false);
  for (const address of addresses) {
    if (blockedReason(address, allowance)) throw refusal(bare, literal);
  }
  return addresses;
}

/** Reads the body, stopping with ResponseTooLargeError once it passes `maxBytes` (or, with `cut`, keeping its first `maxBytes`). */
async function readBody(res: Response, maxBytes: number, host: string, past: 'fail' | 'cut' = 'fail'): Promise<Uint8Array> {
  const declared = res.headers.get('content-length');
  const bytes = await readLimited(res.body, maxBytes, { declared, past });
  if (bytes !== null) return bytes;
  const said = Number(declared);
  throw new ResponseTooLargeError(
    Number.isFinite(said) && said > maxBytes
      ? `${host} answered ${said} bytes, more than the ${maxBytes} allowed`
      : `${host} answered more than the ${maxBytes} bytes allowed`,
  );
}

/** One hop: checks the host, then connects to the checked address (plain http) or by name (https). */
async function hop(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: SafeFetchInit['body'],
  signal: AbortSignal,
): Promise<Response> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BlockedUrlError(`refused ${url.protocol} URL: only http and https are allowed`);
  const addresses = await checkedAddresses(url.hostname, signal);
  if (url.protocol === 'https:') return fetch(url, { method, headers, body, signal, redirect: 'manual' });
  // Plain http: connect to a checked address ourselves, IPv4 first (the likelier route), the next
  // one when a connection cannot be made, as a resolver-driven fetch would.
  const ordered = [...addresses.filter((a) => !a.includes(':')), ...addresses.filter((a) => a.includes(':'))];
  let lastError: unknown;
  for (const ip of ordered) {
    const target = new URL(url);
    target.hostname = ip.includes(':') ? `[${ip}]` : ip;
    try {
      return await fetch(target, { method, headers: { ...headers, host: url.host }, body, signal, redirect: 'manual' });
    } catch (e) {
      if (signal.aborted) throw e;
      lastError = e;
    }
  }
  throw lastError;
}

/**
 * Fetches a URL under the network policy, following redirects itself so that each hop is
 * checked. Answers every status (the caller decides what a 4xx means); throws BlockedUrlError,
 * InvalidRequestError, ResponseTooLargeError, FetchTimeoutError, RedirectError, or the network error.
 */
export async function safeFetch(input: string | URL, init: SafeFetchInit = {}): Promise<SafeResponse> {
  const timeoutMs = init.timeoutMs ?? 15_000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const maxRedirects = init.maxRedirects ?? 5;
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new BlockedUrlError('not a valid URL');
  }
  let method = (init.method ?? 'GET').toUpperCase();
  checkHeaders(init.headers ?? {});
  let headers: Record<string, string> = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  let body = init.body;
  const redirects: string[] = [];
  try {
    for (;;) {
      const res = await hop(url, method, headers, body, signal);
      const location = res.headers.get('location');
      if (!REDIRECTS.has(res.status) || maxRedirects === 0) {
        const bytes = await readBody(res, init.maxBytes ?? DEFAULT_MAX_BYTES, url.host, init.pastMaxBytes);
        return {
          url: url.href,
          status: res.status,
          headers: res.headers,
          redirects,
          body: bytes,
          text: () => new TextDecoder().decode(bytes),
        };
      }
      await res.body?.cancel().catch(() => {});
      if (redirects.length >= maxRedirects) throw new RedirectError(`${url.host} redirected more than ${maxRedirects} times`);
      if (!location) throw new RedirectError(`${url.host} answered ${res.status} without a Location`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new RedirectError(`${url.host} redirected to an invalid URL`);
      }
      // As browsers do: 303, and 301/302 after a POST, turn into a body-less GET.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        delete headers['content-type'];
      }
      // A credential meant for one origin must not follow a redirect to another.
      if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => PORTABLE_HEADERS.has(k)));
      redirects.push(url.href);
      url = next;
    }
  } catch (e) {
    if (timeout.aborted && !(init.signal?.aborted ?? false))
      throw new FetchTimeoutError(`${url.host} did not answer within ${timeoutMs} ms`);
    throw e;
  }
}
