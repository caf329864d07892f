/**
 * Test support for the CRM tools' own tests: a loopback HTTP server that logs every call, and the
 * rolling-window rate limit their fake CRMs enforce. Never loaded by a running service.
 */

export interface CallLog {
  /** "METHOD /path" */
  call: string;
  at: number;
  status: number;
}

export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  url: string;
  log: CallLog[];
  stop(): void;
}

/** Serves `handle` on a free loopback port; `handle` gets the request, its URL and its body text. */
export function serveLoopback(handle: (req: Request, url: URL, text: string) => Response | Promise<Response>): Loopback {
  const log: CallLog[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const url = new URL(req.url);
      const res = await handle(req, url, await req.text());
      log.push({ call: `${req.method} ${url.pathname}`, at: Date.now(), status: res.status });
      return res;
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, log, stop: () => server.stop(true) };
}

/** At most `max` requests in any `windowMs`: `take()` answers 0 and counts the request, or the ms until one may go. */
export function rollingWindow(limit: { max: number; windowMs: number }): { take(): number } {
  const recent: number[] = [];
  return {
    take() {
      const now = Date.now();
      while (recent.length && (recent[0] as number) <= now - limit.windowMs) recent.shift();
      if (recent.length < limit.max) {
        recent.push(now);
        return 0;
      }
      return (recent[0] as number) + limit.windowMs - now;
    },
  };
}
