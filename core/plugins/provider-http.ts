import type { PluginContext } from './plugin-types.ts';

/** A provider answered with a failure; `retryable` tells the host whether trying again may help. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryable: boolean,
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

/** POSTs or GETs JSON to a provider with a time limit; 429 and 5xx are retryable, other 4xx not. */
export async function providerJson(
  ctx: PluginContext,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number },
): Promise<unknown> {
  const timeout = AbortSignal.timeout(init.timeoutMs ?? 30_000);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers: { accept: 'application/json', ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal,
      redirect: 'follow',
    });
  } catch (e) {
    throw new ProviderError(`request to ${new URL(url).host} failed: ${(e as Error).message}`, null, true);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).slice(0, 300);
    throw new ProviderError(
      `${new URL(url).host} answered HTTP ${res.status}${text ? `: ${text}` : ''}`,
      res.status,
      res.status === 429 || res.status >= 500,
    );
  }
  return res.json();
}
