import { type EnrichResult, type PluginContext, ProviderError, providerRequest } from 'workflow-service/plugin-sdk';

/**
 * Fetching a company's home page for the website tools. Unlike a keyed provider, a website that is
 * down or slow concerns its own row only, so every failure here is that row's result (retryable
 * when a later try may work), never a thrown error that would fail the rows of other companies.
 */

/** A fetched HTML page. */
export interface Page {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  html: string;
}

export const PAGE_MAX_BYTES = 2 * 1024 * 1024;
export const PAGE_TIMEOUT_MS = 15_000;
const USER_AGENT = 'Mozilla/5.0 (compatible; WorkflowServiceBot/1.0; company enrichment)';

/** "acme.com", "www.acme.com/about" or "https://acme.com" → an http(s) URL; null when it is none. */
export function siteUrl(input: string): { url: URL; schemeGiven: boolean } | null {
  const text = input.trim();
  if (!text || /\s/.test(text)) return null;
  const schemeGiven = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  try {
    const url = new URL(schemeGiven ? text : `https://${text}`);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (!url.hostname.includes('.') && !url.hostname.startsWith('[')) return null;
    return { url, schemeGiven };
  } catch {
    return null;
  }
}

/** The charset named by the Content-Type header or a <meta charset>, if TextDecoder knows it. */
function decode(body: Uint8Array, contentType: string): string {
  const head = new TextDecoder('latin1').decode(body.subarray(0, 2048));
  const label = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder().decode(body);
  }
}

async function get(ctx: PluginContext, url: URL): Promise<Page> {
  const res = await providerRequest(ctx, url.href, {
    headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', 'accept-language': 'en' },
    timeoutMs: PAGE_TIMEOUT_MS,
    maxBytes: PAGE_MAX_BYTES,
    maxRedirects: 5,
  });
  return { url: res.url, status: res.status, headers: res.headers, html: decode(res.body, res.headers.get('content-type') ?? '') };
}

/**
 * Fetches the page, or answers the row's result when there is none: a bad URL, a refused address
 * or an oversized page is an error for good; a timeout, a network failure, 429 or 5xx is an error
 * worth retrying later; 404/410 is no_result; a page that is not HTML is no_result. A bare domain
 * is tried over https first, then over http when https cannot be reached at all.
 */
export async function fetchPage(ctx: PluginContext, input: string): Promise<{ page: Page } | { result: EnrichResult }> {
  const target = siteUrl(input);
  if (!target) return { result: { status: 'error', error: `"${input.slice(0, 200)}" is not a website URL or domain`, retryable: false } };
  let page: Page;
  try {
    try {
      page = await get(ctx, target.url);
    } catch (e) {
      if (target.schemeGiven || !(e instanceof ProviderError) || !e.retryable || target.url.protocol !== 'https:') throw e;
      const plain = new URL(target.url);
      plain.protocol = 'http:';
      page = await get(ctx, plain);
    }
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    return { result: { status: 'error', error: e.message, retryable: e.retryable } };
  }
  const host = new URL(page.url).host;
  if (page.status === 404 || page.status === 410)
    return { result: { status: 'no_result', reason: `${host} answered HTTP ${page.status}` } };
  if (page.status === 429 || page.status >= 500)
    return { result: { status: 'error', error: `${host} answered HTTP ${page.status}`, retryable: true } };
  if (page.status >= 300) return { result: { status: 'error', error: `${host} answered HTTP ${page.status}`, retryable: false } };
  const type = page.headers.get('content-type') ?? '';
  if (type && !/html|xml/i.test(type))
    return { result: { status: 'no_result', reason: `${host} answered ${type.split(';')[0]}, not an HTML page` } };
  return { page };
}
