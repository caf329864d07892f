/**
 * Which methods each path of the REST door answers, so that a known path asked with another
 * method is a 405 with `Allow` (and OPTIONS lists them) rather than a 404.
 */
export interface RouteMethods {
  /** The methods the path answers (with HEAD beside GET, and OPTIONS), or null when no route has that path. */
  allowed(path: string): string[] | null;
}

/** Routes as OpenAPI (`/projects/{project_id}`) or Elysia (`/assets/:file`) write them. */
export function routeMethods(routes: { method: string; path: string }[]): RouteMethods {
  const byPattern = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const { method, path } of routes) {
    const source = `^${path
      .split('/')
      .map((part) => (/^\{\w+\}$|^:\w+$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')}/?$`;
    const entry = byPattern.get(source) ?? { pattern: new RegExp(source), methods: new Set<string>() };
    entry.methods.add(method.toUpperCase());
    byPattern.set(source, entry);
  }
  const entries = [...byPattern.values()];
  return {
    allowed(path) {
      const methods = new Set<string>();
      for (const { pattern, methods: m } of entries) if (pattern.test(path)) for (const x of m) methods.add(x);
      if (methods.size === 0) return null;
      if (methods.has('GET')) methods.add('HEAD');
      methods.add('OPTIONS');
      return [...methods];
    },
  };
}
