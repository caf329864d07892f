import { join, resolve } from 'node:path';
import { PAGE_HEADERS } from './page-headers.ts';
import { type ConsoleBundle, DIST, ensureConsoleBuilt } from '../../console/build.ts';
import type { Kernel } from '../../core/kernel.ts';
import { log } from '../../core/log.ts';
import { sessionOf } from '../../core/identity/sessions.ts';
import type { RouteContext, RouteSpec } from './route-chain.ts';

const FAVICON = resolve(import.meta.dir, '../mcp/assets/favicon.ico');

/** The console's pages (one shell; the browser picks the page), outside BASE_PATH (docs/console.md). */
export const CONSOLE_PAGES = [
  '/',
  '/projects',
  '/projects/{project_id}',
  '/projects/{project_id}/settings',
  '/settings/integration',
  '/settings/credits',
  '/settings/members',
  '/settings/connections',
  '/settings/webhooks',
];

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

function shell(bundle: ConsoleBundle, boot: unknown): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Workflow Service</title>
<link rel="icon" href="/favicon.ico">
${bundle.style ? `<link rel="stylesheet" href="/console/assets/${bundle.style}">` : ''}
<script id="boot" type="application/json">${escapeJson(boot)}</script>
<script type="module" src="/console/assets/${bundle.script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The console needs JavaScript. The REST API works without it: see /api docs.</noscript>
</body>
</html>`;
}

/**
 * Serves the console built from console/src (console/build.ts): the shell at every console path
 * for a signed-in person (the sign-in page otherwise), and its content-hashed assets, cached for good.
 */
export function consoleRoutes(kernel: Kernel): RouteSpec[] {
  const { basePath } = kernel.config;
  // The MCP resource is known once the MCP host listens (MCP_PORT=0 picks a port).
  const boot = () => ({ basePath, mcpUrl: kernel.oauth.resource });
  let bundle: Promise<ConsoleBundle> | undefined;
  const built = () => {
    bundle ??= ensureConsoleBuilt().catch((e) => {
      bundle = undefined;
      log.error('the console could not be built', { error: (e as Error).message });
      throw e;
    });
    return bundle;
  };
  const page = async ({ request }: RouteContext) => {
    const found = await sessionOf(kernel, request.headers.get('cookie'));
    const url = new URL(request.url);
    if (!found)
      return new Response(null, { status: 303, headers: { location: `/login?next=${encodeURIComponent(url.pathname + url.search)}` } });
    try {
      return new Response(shell(await built(), boot()), { headers: PAGE_HEADERS });
    } catch {
      return Response.json({ detail: 'The console could not be built; the log says why (the REST API works)' }, { status: 503 });
    }
  };
  const asset = async ({ params }: RouteContext) => {
    const b = await built().catch(() => undefined);
    const file = params.file ?? '';
    // Only the files of this build: no path ever reaches the disk from the URL but these names.
    if (!b || (file !== b.script && file !== b.style)) return Response.json({ detail: 'No such console file' }, { status: 404 });
    return new Response(Bun.file(join(DIST, file)), {
      headers: {
        'content-type': TYPES[file.split('.').pop() ?? ''] ?? 'application/octet-stream',
        'cache-control': 'public, max-age=31536000, immutable',
      },
    });
  };
  const route = (path: string, handle: RouteSpec['handle']): RouteSpec => ({
    method: 'GET',
    path,
    outsideBasePath: true,
    // A page asks for the session itself: without one it sends the person to sign in, not a 401.
    caller: 'none',
    handle,
  });
  // The service's icon, for the console's tabs and bookmarks (the MCP host serves the same one).
  const favicon = async () =>
    new Response(Bun.file(FAVICON), { headers: { 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400' } });
  return [...CONSOLE_PAGES.map((path) => route(path, page)), route('/console/assets/{file}', asset), route('/favicon.ico', favicon)];
}
