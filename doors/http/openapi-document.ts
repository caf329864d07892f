import { PARAMETERS, RESPONSE_HEADERS } from './openapi-responses.ts';
import { componentSchemas, type Json } from './openapi-schemas.ts';
import { TAGS } from './openapi-tags.ts';

/** One operation as its route documents it: method, OpenAPI path (`{param}`) and operation object. */
export interface DocumentedRoute {
  method: string;
  path: string;
  operation: Json;
}

const DESCRIPTION = `Projects of company rows, built by builders and filled by enrichment tools.

Every request carries the workspace's API key in the \`service-api-key\` header. Every answer carries
\`x-request-id\` (also in its log line); answers to a known key carry \`RateLimit-Limit\`,
\`RateLimit-Remaining\` and \`RateLimit-Reset\`, and a 429 or 503 says how long to wait in \`Retry-After\`.
Failures answer \`{"detail": …}\`: a sentence, or an object with a \`message\` (and \`errors\` per field).

Besides the statuses listed per operation, any path answers 405 (with \`Allow\`) to a method it does not
serve and 431 to a URL and headers over MAX_HEADER_BYTES; filters too long for a URL go in the body of
\`POST …/rows/search\`. POST operations honour an \`Idempotency-Key\` header.

Types for a client: \`npx openapi-typescript <this document's URL> -o api.d.ts\`.`;

/** The whole document: what every operation's route documents, with the shared parts they refer to. */
export function openapiDocument(routes: DocumentedRoute[]): Json {
  const paths: Record<string, Json> = {};
  for (const { method, path, operation } of routes) {
    paths[path] = { ...paths[path], [method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Workflow Service API',
      version: '1.0.0',
      description: DESCRIPTION,
      contact: { name: 'Workflow Service maintainers' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/', description: 'This service (every path below starts with its BASE_PATH).' }],
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    security: [{ apiKey: [] }],
    paths,
    components: {
      schemas: componentSchemas(paths),
      headers: RESPONSE_HEADERS,
      parameters: PARAMETERS,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'service-api-key', description: 'The workspace’s API key (admin CLI: key:create).' },
      },
    },
  };
}
