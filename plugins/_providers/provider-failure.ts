import { ProviderError, redact, type SafeResponse, statusError } from 'workflow-service/plugin-sdk';

/**
 * A provider's non-2xx answer as a ProviderError in the provider's own words ("Hunter: No user
 * found for the API key supplied (HTTP 401)"). Whether it is retryable and its Retry-After come
 * from the SDK's `statusError` (429 and 5xx retryable), unless `retryable` overrides it for a
 * provider that signals a rate limit with another status. `secrets` (keys sent in the query
 * string) are taken out of the text, in case the provider echoes them.
 */
export function providerFailure(
  provider: string,
  res: SafeResponse,
  detail: string | undefined,
  secrets: string[],
  retryable?: boolean,
): ProviderError {
  const base = statusError(res, secrets);
  const message = detail ? redact(`${provider}: ${detail.slice(0, 300)} (HTTP ${res.status})`, secrets) : base.message;
  return new ProviderError(message, base.status, retryable ?? base.retryable, base.retryAfterMs);
}

/** The body as JSON, or undefined when it is not JSON (an HTML error page from a proxy). */
export function jsonBody(res: SafeResponse): unknown {
  try {
    return JSON.parse(res.text());
  } catch {
    return undefined;
  }
}
