import { resolve } from 'node:path';
import { openapi } from '@elysiajs/openapi';
import type { TSchema } from '@sinclair/typebox';
import { Elysia } from 'elysia';
import type { Config } from '../config.ts';
import type { AnyOperation } from '../operations/operation.ts';
import { ErrorBody } from '../operations/schemas.ts';

/** TypeBox schemas are JSON Schema already; drop TypeBox's symbol keys and recursive $id plumbing. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

const json = (schema: TSchema) => ({ 'application/json': { schema: plain(schema) } });

const commonErrors: Record<number, string> = {
  401: 'Missing or unknown service-api-key.',
  403: 'The workspace plan has no API access.',
  413: 'Body larger than MAX_BODY_BYTES.',
  422: 'Invalid parameters.',
  500: 'Unexpected error.',
};

/** The OpenAPI `detail` of one operation's route: parameters, body and responses from its schemas. */
export function openapiOperation(op: AnyOperation): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = [];
  for (const [where, schema] of [
    ['path', op.params],
    ['query', op.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      const p = plain(prop as TSchema);
      parameters.push({
        name,
        in: where,
        required: where === 'path' || (required.has(name) && p.default === undefined),
        description: p.description,
        schema: p,
      });
    }
  }
  const responses: Record<string, unknown> = {
    [String(op.successStatus ?? 200)]: { description: 'Success', content: json(op.response) },
  };
  const errors = { ...commonErrors, ...(op.project ? { 404: 'Project missing or not in this workspace.' } : {}), ...op.errors };
  for (const [status, description] of Object.entries(errors)) responses[status] = { description, content: json(ErrorBody) };
  return {
    operationId: op.name,
    summary: op.summary,
    description: op.description,
    tags: [op.path.split('/')[1] ?? 'default'],
    parameters,
    ...(op.body ? { requestBody: { required: true, content: json(op.body) } } : {}),
    responses,
    security: [{ apiKey: [] }],
    'x-agent-hint': op.hint,
  };
}

const SWAGGER_ASSETS = resolve(import.meta.dir, '../../node_modules/swagger-ui-dist');

/** The API docs under `{BASE_PATH}/docs`: the OpenAPI document (`/json`), Swagger UI and its assets (served locally, no CDN). */
export function apiDocs(config: Pick<Config, 'basePath'>) {
  const docs = `${config.basePath}/docs`;
  return new Elysia({ name: 'workflow-api-docs' })
    .use(
      openapi({
        path: docs,
        specPath: `${docs}/json`,
        provider: 'swagger-ui',
        exclude: { paths: [new RegExp(`^${docs}`)] },
        swagger: { cdn: `${docs}/assets/swagger-ui-bundle.js`, theme: `${docs}/assets/swagger-ui.css` },
        documentation: {
          info: {
            title: 'Workflow Service API',
            version: '1.0.0',
            description:
              'Projects of company rows built by builders and filled by enrichment tools. Every request carries the service-api-key header.',
          },
          components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'service-api-key' } } },
        },
      }),
    )
    .get(
      `${docs}/assets/:file`,
      ({ params }) => {
        if (!/^swagger-ui(-bundle\.js|\.css)$/.test(params.file)) return new Response('Not found', { status: 404 });
        return new Response(Bun.file(`${SWAGGER_ASSETS}/${params.file}`));
      },
      { detail: { hide: true } },
    );
}
