/**
 * A loopback HTTP server (Bun.serve on 127.0.0.1, a free port) standing in for a provider in the
 * provider tools' tests: the fakes beside each client (fake-hunter.ts, …) give it the provider's
 * routes and answers. It records every request and can be told to fail the next ones with a status,
 * headers (Retry-After) and a body, as the provider would. Never loaded by the service.
 */

export interface SentRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
}

export interface Failure {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface LoopbackProvider {
  /** `http://127.0.0.1:<port>`: the tool's base URL override. */
  url: string;
  /** Every request received, in order. */
  sent: SentRequest[];
  /** Requests to `path`. */
  sentTo(path: string): SentRequest[];
  /** The next `times` requests (any path) answer this failure instead of the route. */
  failNext(failure: Failure, times?: number): void;
  stop(): void;
}

export function startLoopbackProvider(route: (req: SentRequest) => Response): LoopbackProvider {
  const sent: SentRequest[] = [];
  const failures: Failure[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      const request = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers };
      sent.push(request);
      const failure = failures.shift();
      if (failure) return Response.json(failure.body ?? {}, { status: failure.status, headers: failure.headers });
      return route(request);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    sent,
    sentTo: (path) => sent.filter((r) => r.path === path),
    failNext(failure, times = 1) {
      for (let i = 0; i < times; i++) failures.push(failure);
    },
    stop: () => void server.stop(true),
  };
}
