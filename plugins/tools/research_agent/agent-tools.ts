import type { PluginContext } from 'workflow-service/plugin-sdk';
import { ProviderError } from 'workflow-service/plugin-sdk';
import { answerParameters, urlKey } from './answer-schema.ts';
import type { FunctionTool } from './chat.ts';
import { readPage } from './read-page.ts';
import type { Search } from './search.ts';

/** The three functions the model is given: two steps of research, and the answer that ends it. */

export const WEB_SEARCH: FunctionTool = {
  type: 'function',
  function: {
    name: 'web_search',
    description: 'Searches the web. Answers up to 8 results, each with its title, URL and snippet. Costs one step.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to search for, as you would type it in a search engine.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
};

export const READ_PAGE: FunctionTool = {
  type: 'function',
  function: {
    name: 'read_page',
    description: 'Reads a web page and answers its title and visible text (the first 12,000 characters). Costs one step.',
    parameters: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The http(s) URL of the page.' } },
      required: ['url'],
      additionalProperties: false,
    },
  },
};

/** The answer function: its parameters are the user's output schema as `answer`, and the sources. */
export function answerTool(outputSchema: Record<string, unknown>): FunctionTool {
  return {
    type: 'function',
    function: {
      name: 'answer',
      description: 'Gives the final answer, fitting the schema, with the sources it rests on. Ends the research.',
      parameters: answerParameters(outputSchema),
    },
  };
}

/** What the research has seen: URL keys of search results and pages read (sources must be among them). */
export type Seen = Set<string>;

function argument(args: string, name: string): string | null {
  try {
    const v = (JSON.parse(args) as Record<string, unknown>)[name];
    return typeof v === 'string' && v.trim() ? v.trim() : null;
  } catch {
    return null;
  }
}

/**
 * A search failure that concerns every row (the search service down, rate limited or refusing the
 * key) is thrown; any other is told to the model, which may search differently.
 */
function concernsEveryRow(e: unknown): boolean {
  return !(e instanceof ProviderError) || e.retryable || e.status === 401 || e.status === 403;
}

export async function runSearch(search: Search, args: string, seen: Seen): Promise<string> {
  const query = argument(args, 'query');
  if (!query) return 'web_search needs {"query": "…"}.';
  try {
    const found = await search(query.slice(0, 400));
    for (const h of found) seen.add(urlKey(h.url) ?? h.url);
    if (!found.length) return `No results for "${query}".`;
    return found.map((h, i) => `${i + 1}. ${h.title}\n${h.url}\n${h.snippet}`).join('\n\n');
  } catch (e) {
    if (concernsEveryRow(e)) throw e;
    return `The search failed: ${(e as Error).message}`;
  }
}

export async function runRead(ctx: PluginContext, args: string, seen: Seen): Promise<string> {
  const url = argument(args, 'url');
  if (!url) return 'read_page needs {"url": "https://…"}.';
  const page = await readPage(ctx, url);
  if (!page.ok) return `Could not read ${url.slice(0, 300)}: ${page.error}`;
  // Both the URL asked for and the one that answered after redirects may be cited.
  seen.add(urlKey(url) ?? url);
  seen.add(urlKey(page.url) ?? page.url);
  return `URL: ${page.url}\nTitle: ${page.title}\n\n${page.text}`;
}
