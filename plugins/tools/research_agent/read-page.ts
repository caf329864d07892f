import { parse } from 'node-html-parser';
import type { PluginContext } from 'workflow-service/plugin-sdk';
import { fetchPage } from '../_web/fetch-page.ts';

/**
 * Reading a page for the agent: the shared website fetch (SSRF-guarded, 5 redirects, 2 MB, 15 s)
 * and the page's visible text. A page that cannot be read is told to the model, which may try
 * another: it never fails the row.
 */

/** Characters of a page's text handed to the model: enough for a page's substance, bounded for the context window. */
export const PAGE_TEXT_CHARS = 12_000;

/** Elements whose text is not what a reader sees. */
const HIDDEN = 'script, style, noscript, template, svg, iframe, head';

/** The title and visible text of an HTML page, one line per block, blank runs removed. */
export function pageText(html: string): { title: string; text: string } {
  // node-html-parser keeps a doctype as a text node: it is not text a reader sees.
  const root = parse(html.replace(/^\s*<!doctype[^>]*>/i, ''));
  const title = root.querySelector('title')?.textContent.replace(/\s+/g, ' ').trim() ?? '';
  for (const el of root.querySelectorAll(HIDDEN)) el.remove();
  const text = root.structuredText
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
  return { title, text };
}

export type PageRead = { ok: true; url: string; title: string; text: string } | { ok: false; error: string };

export async function readPage(ctx: PluginContext, url: string): Promise<PageRead> {
  const fetched = await fetchPage(ctx, url);
  if ('result' in fetched) {
    const r = fetched.result;
    return { ok: false, error: r.status === 'error' ? r.error : r.status === 'no_result' ? (r.reason ?? 'nothing there') : 'no page' };
  }
  try {
    const { title, text } = pageText(fetched.page.html);
    const cut = text.length > PAGE_TEXT_CHARS ? `${text.slice(0, PAGE_TEXT_CHARS)}\n[… the rest of the page is cut]` : text;
    return { ok: true, url: fetched.page.url, title, text: cut };
  } catch (e) {
    return { ok: false, error: `could not read the page: ${(e as Error).message}` };
  }
}
