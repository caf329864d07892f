/**
 * Local HTTP servers (Bun.serve on loopback, random port) that speak just enough of each
 * provider's API for the enrichment tools' tests: a generic recorder with scriptable failures,
 * an Apollo-compatible API, an OpenAI-compatible chat completion API, and websites.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  /** Parsed JSON when the body is JSON, else its text ('' when none). */
  body: any;
}

type Handler = (req: RecordedRequest) => Response | Promise<Response>;

export interface FakeServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** The next `times` requests to `path` (any method) answer `status` before the route runs again. */
  failNext(path: string, status: number, times?: number, body?: string): void;
  /** Forgets the failures not used up yet. */
  clearFailures(): void;
  /** Requests to `path`, to assert what was sent. */
  requestsTo(path: string): RecordedRequest[];
  stop(): void;
}

/** Routes are keyed `"METHOD /path"` or `"/path"` (any method); anything else is 404. */
export function startFakeServer(routes: Record<string, Handler>): FakeServer {
  const requests: RecordedRequest[] = [];
  const failures = new Map<string, { status: number; times: number; body: string }[]>();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      const text = await req.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : '';
      } catch {}
      const recorded: RecordedRequest = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body };
      requests.push(recorded);
      const queue = failures.get(url.pathname);
      const failure = queue?.[0];
      if (queue && failure) {
        if (--failure.times <= 0) queue.shift();
        return new Response(failure.body, { status: failure.status, headers: { 'content-type': 'application/json' } });
      }
      const handler = routes[`${req.method} ${url.pathname}`] ?? routes[url.pathname];
      return handler ? handler(recorded) : Response.json({ error: 'not found' }, { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port as number,
    requests,
    failNext(path, status, times = 1, body = JSON.stringify({ error: `fake ${status}` })) {
      failures.set(path, [...(failures.get(path) ?? []), { status, times, body }]);
    },
    clearFailures: () => failures.clear(),
    requestsTo: (path) => requests.filter((r) => r.path === path),
    stop: () => server.stop(true),
  };
}

// ─── Apollo ─────────────────────────────────────────────────────────────────────────────────────

export const APOLLO_KEY = 'apollo-test-key-123';

/** An Apollo-compatible API knowing these people (matched by email or by last name + domain) and companies (by domain). */
export function fakeApollo(data: {
  people: Record<string, unknown>[];
  organizations: Record<string, Record<string, unknown>>;
}): FakeServer {
  const authorized = (r: RecordedRequest) => r.headers.get('x-api-key') === APOLLO_KEY;
  const denied = () => Response.json({ error: 'Invalid access credentials.' }, { status: 401 });
  return startFakeServer({
    'POST /api/v1/people/match': (r) => {
      if (!authorized(r)) return denied();
      const q = r.body as Record<string, string>;
      const person = data.people.find(
        (p: any) =>
          (q.email && p.email === q.email) ||
          (q.linkedin_url && p.linkedin_url === q.linkedin_url) ||
          (q.last_name && p.last_name === q.last_name && p.organization?.primary_domain === q.domain),
      );
      return Response.json({ person: person ?? null });
    },
    'GET /api/v1/organizations/enrich': (r) => {
      if (!authorized(r)) return denied();
      const org = data.organizations[r.query.get('domain') ?? ''];
      return Response.json(org ? { organization: org } : {});
    },
  });
}

// ─── OpenAI ─────────────────────────────────────────────────────────────────────────────────────

export const OPENAI_KEY = 'sk-test-openai-key-456';

/** An OpenAI-compatible chat completion API; `answer` writes the assistant's content from the request. */
export function fakeOpenAI(answer: (body: any) => string): FakeServer {
  return startFakeServer({
    'POST /v1/chat/completions': (r) => {
      if (r.headers.get('authorization') !== `Bearer ${OPENAI_KEY}`) {
        return Response.json(
          { error: { message: `Incorrect API key provided: ${r.headers.get('authorization')}`, type: 'invalid_request_error' } },
          { status: 401 },
        );
      }
      if (r.body.model === 'missing-model')
        return Response.json({ error: { message: 'The model `missing-model` does not exist' } }, { status: 404 });
      return Response.json({
        id: 'chatcmpl-test',
        object: 'chat.completion',
        model: r.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: answer(r.body), refusal: null }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    },
  });
}

// ─── Websites ───────────────────────────────────────────────────────────────────────────────────

/** A website: each path answers its page (HTML unless a Response is given), with these headers. */
export function fakeSite(pages: Record<string, string | (() => Response)>, headers: Record<string, string> = {}): FakeServer {
  return startFakeServer(
    Object.fromEntries(
      Object.entries(pages).map(([path, page]) => [
        path,
        () =>
          typeof page === 'string' ? new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8', ...headers } }) : page(),
      ]),
    ),
  );
}
