import type { EnrichResult, PluginContext } from './plugin-types.ts';
import {
  BlockedUrlError,
  FetchTimeoutError,
  InvalidRequestError,
  RedirectError,
  ResponseTooLargeError,
  type SafeResponse,
  safeFetch,
} from './safe-fetch.ts';

/** A provider answered with a failure; `retryable` tells the host whether trying again may help. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
    /** The provider's Retry-After, when it gave one: the earliest useful retry. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** Reads a required credential, failing with a message that names the env var to set. */
export function requireEnv(ctx: PluginContext, name: string): string {
  const v = ctx.env(name);
  if (!v) throw new ProviderError(`${name} is not set; set it or run with PROVIDER_MODE=sandbox`, null, false);
  return v;
}

/** Replaces each secret (a key we sent) in a provider's text, which some providers echo back in errors. */
export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/** The values of credential-bearing headers, to keep them out of error texts. */
function secretsOf(headers: Record<string, string> = {}): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(headers)) {
    if (!/^(authorization|proxy-authorization|cookie|x-api-key|api-key|x-goog-api-key)$|key|token|secret/i.test(k)) continue;
    out.push(v);
    const bearer = /^\s*\S+\s+(\S+)\s*$/.exec(v); // the token alone, without "Bearer "
    if (bearer) out.push(bearer[1] as string);
  }
  return out;
}

function retryAfterMs(res: SafeResponse): number | undefined {
  const raw = res.headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

export interface ProviderRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is already a string. */
  body?: unknown;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
}

/**
 * Sends one request through safeFetch under the job's signal and answers the response whatever
 * its status. Transport failures become ProviderErrors: a refused address, a request that cannot be
 * sent (a header value with a line break), an oversized body or a redirect loop is permanent; a
 * timeout or a network error is retryable.
 */
export async function providerRequest(ctx: PluginContext, url: string, init: ProviderRequest = {}): Promise<SafeResponse> {
  let host = 'provider';
  try {
    host = new URL(url).host;
  } catch {}
  const isText = typeof init.body === 'string';
  const headers = {
    ...(init.body !== undefined && !isText ? { 'content-type': 'application/json' } : {}),
    ...init.headers,
  };
  try {
    return await safeFetch(url, {
      method: init.method,
      headers,
      body: init.body === undefined ? undefined : isText ? (init.body as string) : JSON.stringify(init.body),
      signal: ctx.signal,
      timeoutMs: init.timeoutMs ?? 30_000,
      maxBytes: init.maxBytes,
      maxRedirects: init.maxRedirects,
    });
  } catch (e) {
    const message = redact((e as Error).message, secretsOf(init.headers));
    if (
      e instanceof BlockedUrlError ||
      e instanceof InvalidRequestError ||
      e instanceof ResponseTooLargeError ||
      e instanceof RedirectError
    ) {
      throw new ProviderError(message, null, false);
    }
    if (e instanceof FetchTimeoutError) throw new ProviderError(message, null, true);
    if (ctx.signal.aborted) throw e;
    throw new ProviderError(`request to ${host} failed: ${message}`, null, true);
  }
}

/** A ProviderError for a non-2xx answer: 429 and 5xx are retryable, other 4xx not. */
export function statusError(res: SafeResponse, secrets: string[] = []): ProviderError {
  const host = new URL(res.url).host;
  const text = redact(res.text().slice(0, 300), secrets);
  return new ProviderError(
    `${host} answered HTTP ${res.status}${text ? `: ${text}` : ''}`,
    res.status,
    res.status === 429 || res.status >= 500,
    retryAfterMs(res),
  );
}

/** POSTs or GETs JSON to a provider with a time limit; throws a ProviderError on a non-2xx answer. */
export async function providerJson(ctx: PluginContext, url: string, init: ProviderRequest): Promise<unknown> {
  const res = await providerRequest(ctx, url, { ...init, headers: { accept: 'application/json', ...init.headers } });
  if (res.status < 200 || res.status >= 300) throw statusError(res, secretsOf(init.headers));
  try {
    return JSON.parse(res.text());
  } catch {
    throw new ProviderError(`${new URL(res.url).host} answered HTTP ${res.status} with a body that is not JSON`, res.status, false);
  }
}

/**
 * Decides whether a failure belongs to one row or to the whole batch. A missing key, a bad key
 * (401/403), a rate limit or an outage is the same for every row, so it is thrown again: the host
 * fails the batch (or retries the job when retryable). A 4xx about this row's own input, or a URL
 * of this row that may not be fetched, becomes this row's result: `no_result` for 404, `error`
 * otherwise.
 */
export function rowFailure(e: unknown): EnrichResult {
  if (!(e instanceof ProviderError) || e.retryable || e.status === 401 || e.status === 403) throw e;
  if (e.status === 404) return { status: 'no_result', reason: 'not found' };
  return { status: 'error', error: e.message, retryable: false };
}
