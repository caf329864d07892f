import { type PluginContext, type ProviderNeeds, providerJson, requireEnv } from 'workflow-service/plugin-sdk';

/**
 * The Apollo-compatible API (api.apollo.io, or APOLLO_BASE_URL for a proxy or a test double), shared
 * by the two search builders and the two enrichment tools. Folders under plugins/ whose name starts
 * with `_` are shared code, never loaded as plugins.
 */

/**
 * What every Apollo plugin declares as its `provider`: one key, one base URL, and one rate budget
 * (`id: 'apollo'`) that the builders' pages and the tools' batches spend together.
 */
export const APOLLO_PROVIDER: ProviderNeeds = {
  id: 'apollo',
  requiredEnv: ['APOLLO_API_KEY'],
  optionalEnv: ['APOLLO_BASE_URL'],
  rateLimit: { perSecond: 5, burst: 10 },
};

/** One call to the API, authenticated with the X-Api-Key header (never a query parameter, which would end up in access logs). */
export interface Apollo {
  get(path: string, query: Record<string, string>): Promise<unknown>;
  post(path: string, body: Record<string, unknown>): Promise<unknown>;
}

/** The client for this run; throws (naming APOLLO_API_KEY) when the key is missing. */
export function apolloClient(ctx: PluginContext, timeoutMs = 20_000): Apollo {
  const key = requireEnv(ctx, 'APOLLO_API_KEY');
  const base = (ctx.env('APOLLO_BASE_URL') || 'https://api.apollo.io').replace(/\/+$/, '');
  const headers = { 'X-Api-Key': key, 'Cache-Control': 'no-cache' };
  return {
    get: (path, query) => providerJson(ctx, `${base}${path}?${new URLSearchParams(query)}`, { method: 'GET', headers, timeoutMs }),
    post: (path, body) => providerJson(ctx, `${base}${path}`, { method: 'POST', headers, body, timeoutMs }),
  };
}

/**
 * Pages through a search endpoint (`/api/v1/mixed_people/search` or `/api/v1/mixed_companies/search`)
 * until `maxResults` records or the last page.
 */
export async function* apolloSearch<T>(
  ctx: PluginContext,
  path: string,
  listKey: string,
  filters: Record<string, unknown>,
  maxResults: number,
): AsyncGenerator<T[]> {
  // A page of 100 records takes longer than one lookup.
  const apollo = apolloClient(ctx, 30_000);
  const perPage = Math.min(100, maxResults);
  let produced = 0;
  for (let page = 1; produced < maxResults; page++) {
    const data = (await apollo.post(path, { ...filters, page, per_page: perPage })) as Record<string, unknown> & {
      pagination?: { total_pages?: number };
    };
    const items = ((data[listKey] as T[] | undefined) ?? []).slice(0, maxResults - produced);
    if (items.length === 0) return;
    produced += items.length;
    yield items;
    if (data.pagination?.total_pages !== undefined && page >= data.pagination.total_pages) return;
  }
}

/** Non-empty trimmed string, or undefined. */
export function text(v: unknown): string | undefined {
  const s = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
  return s || undefined;
}
