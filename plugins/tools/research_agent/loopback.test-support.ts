/**
 * For this folder's tests: HTTP servers on loopback that speak the APIs the agent calls — the
 * chat-completions API with tool calls (turns scripted by the test), SearXNG's and Brave's search
 * APIs, and web pages — recording what they were sent. Nothing here is mocked inside the plugin.
 */

/** A chat-completions request body, as far as the tests read it. */
export interface ChatBody {
  model: string;
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string; parameters: { properties: Record<string, unknown> } } }[];
  tool_choice?: unknown;
}

export interface Received {
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /** The JSON body of a POST (the chat API's). */
  body: ChatBody;
}

export interface Loopback {
  url: string;
  received: Received[];
  stop(): void;
}

export type Route = (r: Received) => Response | Promise<Response>;

/** A server on `host` (127.0.0.1 unless said) answering each path by its route, 404 otherwise. */
export function serve(routes: Record<string, Route>, host = '127.0.0.1'): Loopback {
  const received: Received[] = [];
  const server = Bun.serve({
    hostname: host,
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const text = req.method === 'POST' ? await req.text() : '';
      const r: Received = {
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: text ? JSON.parse(text) : { model: '', messages: [] },
      };
      received.push(r);
      const route = routes[url.pathname];
      return route ? route(r) : new Response('not found', { status: 404 });
    },
  });
  return { url: `http://${host}:${server.port}`, received, stop: () => server.stop(true) };
}

/** A chat completion whose assistant message calls one function. */
export function callReply(name: string, args: unknown): Response {
  const id = `call_${Math.random().toString(36).slice(2, 10)}`;
  return Response.json({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  });
}

/** An HTML page. */
export const html = (body: string): Response => new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8' } });

/** The names of the functions a chat request offered. */
export const offered = (body: ChatBody | undefined): string[] => (body?.tools ?? []).map((t) => t.function.name);

/** The tool messages of a chat request, in order. */
export const toolMessages = (body: ChatBody | undefined): string[] =>
  (body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content ?? '');
