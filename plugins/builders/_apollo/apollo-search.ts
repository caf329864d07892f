import { type PluginContext, providerJson, requireEnv } from 'workflow-service/plugin-sdk';

/**
 * Pages through an Apollo-compatible search endpoint (`/api/v1/mixed_people/search` or
 * `/api/v1/mixed_companies/search`) until `maxResults` records or the last page.
 */
export async function* apolloSearch<T>(
  ctx: PluginContext,
  path: string,
  listKey: string,
  filters: Record<string, unknown>,
  maxResults: number,
): AsyncGenerator<T[]> {
  const key = requireEnv(ctx, 'APOLLO_API_KEY');
  const base = ctx.env('APOLLO_BASE_URL') ?? 'https://api.apollo.io';
  const perPage = Math.min(100, maxResults);
  let produced = 0;
  for (let page = 1; produced < maxResults; page++) {
    const data = (await providerJson(ctx, `${base}${path}`, {
      method: 'POST',
      headers: { 'X-Api-Key': key, 'Cache-Control': 'no-cache' },
      body: { ...filters, page, per_page: perPage },
    })) as Record<string, unknown> & { pagination?: { total_pages?: number } };
    const items = ((data[listKey] as T[] | undefined) ?? []).slice(0, maxResults - produced);
    if (items.length === 0) return;
    produced += items.length;
    yield items;
    if (data.pagination?.total_pages !== undefined && page >= data.pagination.total_pages) return;
  }
}
