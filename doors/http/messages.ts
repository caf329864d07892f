/** Small helpers for requests and responses as Bun hands them to the REST door. */

/** The path of a request URL, without its query string. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  if (start < 0) return '/';
  const query = url.indexOf('?', start);
  return url.slice(start, query < 0 ? undefined : query);
}

/** The response with these headers set; a copy when its headers are immutable (a response passed through as it came). */
export function withHeaders(res: Response, headers: Record<string, string>): Response {
  const entries = Object.entries(headers);
  if (entries.length === 0) return res;
  try {
    for (const [name, value] of entries) res.headers.set(name, value);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    for (const [name, value] of entries) copy.headers.set(name, value);
    return copy;
  }
}
