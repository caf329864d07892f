import { type PluginContext, providerJson, requireEnv } from 'workflow-service/plugin-sdk';

/**
 * One call to an Apollo-compatible API (api.apollo.io, or APOLLO_BASE_URL for a proxy or a test
 * double), authenticated with the X-Api-Key header (never a query parameter, which would end up
 * in access logs).
 */
export interface Apollo {
  get(path: string, query: Record<string, string>): Promise<unknown>;
  post(path: string, body: Record<string, unknown>): Promise<unknown>;
}

/** The client for this run; throws (naming APOLLO_API_KEY) when the key is missing. */
export function apolloClient(ctx: PluginContext): Apollo {
  const key = requireEnv(ctx, 'APOLLO_API_KEY');
  const base = (ctx.env('APOLLO_BASE_URL') || 'https://api.apollo.io').replace(/\/+$/, '');
  const headers = { 'X-Api-Key': key, 'Cache-Control': 'no-cache' };
  return {
    get: (path, query) => providerJson(ctx, `${base}${path}?${new URLSearchParams(query)}`, { method: 'GET', headers, timeoutMs: 20_000 }),
    post: (path, body) => providerJson(ctx, `${base}${path}`, { method: 'POST', headers, body, timeoutMs: 20_000 }),
  };
}

/** Non-empty trimmed string, or undefined. */
export function text(v: unknown): string | undefined {
  const s = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
  return s || undefined;
}
