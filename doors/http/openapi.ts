import { resolve } from 'node:path';
import { Elysia } from 'elysia';
import type { Config } from '../../core/config.ts';
import { SWAGGER_INIT_SCRIPT, swaggerPage } from './api-docs-page.ts';
import { type DocumentedRoute, openapiDocument } from './openapi-document.ts';
import type { Json } from './openapi-schemas.ts';

export { openapiOperation } from './openapi-operation.ts';

const SWAGGER_ASSETS = resolve(import.meta.dir, '../../node_modules/swagger-ui-dist');
const SWAGGER_FILES = new Set(['swagger-ui-bundle.js', 'swagger-ui.css']);
const TITLE = 'Workflow Service API';

/** What Elysia keeps of a route: enough to find the operations' documentation. */
interface RouteRecord {
  method: string;
  path: string;
  hooks?: { detail?: Json };
}

/**
 * The operation routes of the app that uses the plugin: those whose `detail` is an OpenAPI
 * operation (openapiOperation). Elysia hands every plugin its host's route table through
 * `getGlobalRoutes` (the @elysiajs/openapi plugin reads it too); only its types call it protected.
 */
function documentedRoutes(plugin: Elysia): DocumentedRoute[] {
  const routes = (plugin as unknown as { getGlobalRoutes(): RouteRecord[] }).getGlobalRoutes();
  return routes.flatMap(({ method, path, hooks }) => {
    const detail = hooks?.detail;
    if (typeof detail?.operationId !== 'string' || detail.hide) return [];
    return [{ method, path: path.replace(/:(\w+)/g, '{$1}'), operation: detail }];
  });
}

/**
 * The API docs under `{BASE_PATH}/docs`: the OpenAPI 3.1 document (`/json`), built from the routes'
 * documentation, and Swagger UI with its assets (served locally, no CDN).
 */
export function apiDocs(config: Pick<Config, 'basePath'>) {
  const docs = `${config.basePath}/docs`;
  const plugin = new Elysia({ name: 'workflow-api-docs', seed: docs });
  // Built on first request (every route is mounted by then), again only if routes were added since.
  let built: { routes: number; body: string } | undefined;
  const document = () => {
    const routes = documentedRoutes(plugin);
    if (built?.routes !== routes.length) built = { routes: routes.length, body: JSON.stringify(openapiDocument(routes)) };
    return built.body;
  };
  const page = swaggerPage(docs, TITLE);
  return plugin
    .get(docs, () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get(`${docs}/json`, () => new Response(document(), { headers: { 'content-type': 'application/json' } }), {
      detail: { hide: true },
    })
    .get(
      `${docs}/assets/:file`,
      ({ params }) => {
        if (params.file === 'swagger-init.js') {
          return new Response(SWAGGER_INIT_SCRIPT, { headers: { 'content-type': 'text/javascript; charset=utf-8' } });
        }
        if (!SWAGGER_FILES.has(params.file)) return Response.json({ detail: 'No such asset' }, { status: 404 });
        return new Response(Bun.file(`${SWAGGER_ASSETS}/${params.file}`));
      },
      { detail: { hide: true } },
    );
}
