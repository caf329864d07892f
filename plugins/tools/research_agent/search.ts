import { parse } from 'node-html-parser';
import { type PluginContext, ProviderError, providerJson } from 'workflow-service/plugin-sdk';

/**
 * Web search for the agent, through one of two public API shapes, chosen by RESEARCH_SEARCH_PROVIDER
 * (or by which one is configured):
 * - SearXNG (self-hosted metasearch): GET {SEARXNG_URL}/search?q=…&format=json →
 *   `{results: [{url, title, content}]}` (the instance must enable the json format in settings.yml);
 * - Brave Search API: GET {BRAVE_SEARCH_BASE_URL}/res/v1/web/search?q=…&count=… with
 *   `X-Subscription-Token: BRAVE_SEARCH_API_KEY` → `{web: {results: [{url, title, description}]}}`.
 */

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export type Search = (query: string) => Promise<SearchHit[]>;

/** Results handed to the model per search. */
export const RESULTS_PER_SEARCH = 8;
const SEARCH_TIMEOUT_MS = 20_000;
const BRAVE_DEFAULT_BASE = 'https://api.search.brave.com';

/** Brave marks the query's words with <strong>; snippets go to the model as plain text. */
const plain = (html: string | undefined): string => (html ? parse(html).textContent.replace(/\s+/g, ' ').trim().slice(0, 500) : '');

function hits(items: { url?: unknown; title?: unknown; text?: string }[]): SearchHit[] {
  return items
    .filter((r) => typeof r.url === 'string' && /^https?:\/\//i.test(r.url))
    .slice(0, RESULTS_PER_SEARCH)
    .map((r) => ({ url: r.url as string, title: plain(String(r.title ?? '')), snippet: plain(r.text) }));
}

function searxng(ctx: PluginContext, base: string): Search {
  return async (query) => {
    const url = `${base.replace(/\/+$/, '')}/search?${new URLSearchParams({ q: query, format: 'json' })}`;
    const data = (await providerJson(ctx, url, { headers: { accept: 'application/json' }, timeoutMs: SEARCH_TIMEOUT_MS })) as {
      results?: { url?: unknown; title?: unknown; content?: string }[];
    };
    return hits((data.results ?? []).map((r) => ({ ...r, text: r.content })));
  };
}

function brave(ctx: PluginContext, key: string, base: string): Search {
  return async (query) => {
    const params = new URLSearchParams({ q: query, count: String(RESULTS_PER_SEARCH) });
    const data = (await providerJson(ctx, `${base.replace(/\/+$/, '')}/res/v1/web/search?${params}`, {
      headers: { accept: 'application/json', 'x-subscription-token': key },
      timeoutMs: SEARCH_TIMEOUT_MS,
    })) as { web?: { results?: { url?: unknown; title?: unknown; description?: string }[] } };
    return hits((data.web?.results ?? []).map((r) => ({ ...r, text: r.description })));
  };
}

/** The configured search; throws (every row fails, naming the variables) when there is none. */
export function searchOf(ctx: PluginContext): Search {
  const chosen = ctx.env('RESEARCH_SEARCH_PROVIDER')?.trim().toLowerCase();
  const braveKey = ctx.env('BRAVE_SEARCH_API_KEY');
  const searxUrl = ctx.env('SEARXNG_URL');
  const braveBase = ctx.env('BRAVE_SEARCH_BASE_URL') || BRAVE_DEFAULT_BASE;
  if (chosen && chosen !== 'brave' && chosen !== 'searxng')
    throw new ProviderError(`RESEARCH_SEARCH_PROVIDER is "${chosen.slice(0, 40)}"; use brave or searxng`, null, false);
  if (chosen === 'brave' || (!chosen && braveKey)) {
    if (!braveKey) throw new ProviderError('BRAVE_SEARCH_API_KEY is not set; set it or run with PROVIDER_MODE=sandbox', null, false);
    return brave(ctx, braveKey, braveBase);
  }
  if (searxUrl) return searxng(ctx, searxUrl);
  throw new ProviderError(
    'no web search is configured: set SEARXNG_URL (a SearXNG instance) or BRAVE_SEARCH_API_KEY, or run with PROVIDER_MODE=sandbox',
    null,
    false,
  );
}
