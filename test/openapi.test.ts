import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { operations } from '../core/operations/index.ts';
import type { AnyOperation } from '../core/operations/operation.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const BASE = '/api/enterprise';
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** The value a local `$ref` ("#/a/b") points at, or undefined. */
function pointer(doc: any, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((node: any, part) => node?.[part], doc);
}

/** Every `$ref` of the document, with where it sits. */
function refs(node: unknown, at = '#', found: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) refs(item, `${at}/${i}`, found);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push([at, value]);
      else refs(value, `${at}/${key}`, found);
    }
  }
  return found;
}

/** The statuses an operation can answer, from what it declares (docs/api.md). */
function expectedStatuses(op: AnyOperation): string[] {
  const statuses = [op.successStatus ?? 200, ...(op.otherSuccess ? [op.otherSuccess.status] : []), 401, 403, 429, 500, 503];
  if (op.body) statuses.push(413, 415);
  if (op.project || op.owned) statuses.push(404);
  if (op.method === 'POST') statuses.push(409, 422);
  if (op.params || op.query || op.body) statuses.push(422);
  if (op.invalidStatus) statuses.push(op.invalidStatus);
  // A builder run reserves credits up front (core/credits/charges.ts); every spending call meets its key's monthly cap.
  if (op.name === 'run_builder' || op.spends) statuses.push(402);
  return [...new Set(statuses.map(String))].sort();
}

describe('OpenAPI document', () => {
  let t: TestService;
  let doc: any;
  const operationOf = (op: AnyOperation) => doc.paths[BASE + op.path]?.[op.method.toLowerCase()];
  const resolved = (node: any) => (node?.$ref ? pointer(doc, node.$ref) : node) as any;

  beforeAll(async () => {
    t = await startTestService('sqlite');
    const res = await fetch(`${t.url}/docs/json`);
    expect(res.status).toBe(200);
    doc = await res.json();
  });
  afterAll(() => t.stop());

  test('is a valid OpenAPI 3.1 document according to swagger-parser', async () => {
    const api = await SwaggerParser.validate(structuredClone(doc));
    expect(api.info.title).toBe('Workflow Service API');
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  test('documents every operation of the table, the project event stream and the CSV download, and nothing else, under the base path', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
      Object.keys(item)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    // The event stream is no operation of the table (no MCP tool: a stream), but it is documented.
    const expected = [
      ...operations.map((op) => `${op.method} ${BASE}${op.path}`),
      `GET ${BASE}/projects/{project_id}/events`,
      `GET ${BASE}/projects/{project_id}/export.csv`,
      `POST ${BASE}/inbound/{token}`,
      `POST ${BASE}/projects/import.csv`,
    ];
    expect(documented.sort()).toEqual(expected.sort());
    for (const op of operations) {
      expect(operationOf(op)).toMatchObject({ operationId: op.name, summary: op.summary, description: op.description });
    }
  });

  test('has servers, contact, license and a described tag for every operation', () => {
    expect(doc.servers.length).toBeGreaterThan(0);
    expect(doc.info.contact.name).toBeTruthy();
    expect(doc.info.license.name).toBeTruthy();
    const tags = new Map(doc.tags.map((tag: any) => [tag.name, tag.description]));
    for (const op of operations) {
      const [tag] = operationOf(op).tags;
      expect({ op: op.name, tag, description: Boolean(tags.get(tag)) }).toEqual({ op: op.name, tag, description: true });
    }
  });

  test('every path, query and header parameter has a description', () => {
    const missing = operations.flatMap((op) =>
      (operationOf(op).parameters ?? [])
        .map(resolved)
        .filter((p: any) => !p.description)
        .map((p: any) => `${op.name}: ${p.in} ${p.name}`),
    );
    expect(missing).toEqual([]);
  });

  test('GET rows lists its query parameters beside the path parameter (none overwritten)', () => {
    const list = operationOf(operations.find((op) => op.name === 'get_project_rows') as AnyOperation);
    const params = list.parameters.map(resolved).map((p: any) => `${p.in} ${p.name}`);
    expect(params).toEqual([
      'path project_id',
      'query page',
      'query page_size',
      'query filter_groups',
      'query sort_rules',
      'query columns',
      'query format',
      'query include',
      'query include_meta',
    ]);
    const filter = list.parameters.find((p: any) => p.name === 'filter_groups');
    expect(filter.schema).toMatchObject({ type: 'string', contentSchema: { $ref: '#/components/schemas/FilterGroups' } });
    expect(JSON.parse(filter.example)).toBeArray();
  });

  test('POST operations document the Idempotency-Key header', () => {
    for (const op of operations.filter((o) => o.method === 'POST')) {
      const names = operationOf(op)
        .parameters.map(resolved)
        .map((p: any) => `${p.in} ${p.name}`);
      expect({ op: op.name, names }).toEqual({ op: op.name, names: expect.arrayContaining(['header Idempotency-Key']) });
    }
  });

  test('shared schemas are named components and every $ref resolves (the recursive filter group included)', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['ErrorBody', 'Row', 'Column', 'ProjectDetails', 'FilterGroup', 'FilterGroups', 'SortRules']),
    );
    const broken = refs(doc).filter(([, ref]) => pointer(doc, ref) === undefined);
    expect(broken).toEqual([]);
    const rules = doc.components.schemas.FilterGroup.properties.rules.items.anyOf;
    expect(rules).toContainEqual({ $ref: '#/components/schemas/FilterGroup' });
    expect(JSON.stringify(doc)).not.toContain('"$id"');
  });

  test('bodies whose filters the service checks itself document the filter shapes', () => {
    const body = (name: string) => {
      const op = operations.find((o) => o.name === name) as AnyOperation;
      return operationOf(op).requestBody.content['application/json'].schema.properties;
    };
    expect(body('set_filters').filter_groups).toMatchObject({ $ref: '#/components/schemas/FilterGroups' });
    expect(body('search_project_rows').filter_groups).toMatchObject({ $ref: '#/components/schemas/FilterGroups' });
    expect(body('search_project_rows').sort_rules).toMatchObject({ $ref: '#/components/schemas/SortRules' });
  });

  test('every status an operation can answer is documented with the error body and the response headers', () => {
    for (const op of operations) {
      const responses = operationOf(op).responses;
      expect({ op: op.name, statuses: Object.keys(responses).sort() }).toEqual({ op: op.name, statuses: expectedStatuses(op) });
      for (const [status, response] of Object.entries(responses) as [string, any][]) {
        const where = `${op.name} ${status}`;
        const headers = Object.keys(response.headers).map((h) => h.toLowerCase());
        const wanted = ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
        if (status === '429' || status === '503') wanted.push('retry-after');
        expect({ where, headers: headers.sort() }).toEqual({ where, headers: wanted.sort() });
        if (Number(status) >= 400) {
          expect({ where, schema: response.content['application/json'].schema }).toEqual({
            where,
            schema: { $ref: '#/components/schemas/ErrorBody' },
          });
        }
        expect({ where, example: response.content['application/json'].example !== undefined }).toEqual({ where, example: true });
      }
    }
    expect(doc.components.headers['Retry-After']).toMatchObject({ required: true, schema: { type: 'integer' } });
  });

  test('every operation shows an example request and answer', () => {
    for (const op of operations) {
      const o = operationOf(op);
      const body = o.requestBody?.content['application/json'].example;
      const pathExamples = (o.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.example);
      expect({ op: op.name, body: op.body ? body !== undefined : true, path: pathExamples.every((e: unknown) => e !== undefined) }).toEqual(
        {
          op: op.name,
          body: true,
          path: true,
        },
      );
    }
  });

  test('the Swagger UI page loads its assets and the document from absolute local URLs (no CDN)', async () => {
    const html = await (await fetch(`${t.url}/docs`)).text();
    expect(html).toContain(`src="${BASE}/docs/assets/swagger-ui-bundle.js"`);
    expect(html).toContain(`data-spec-url="${BASE}/docs/json"`);
    expect(html).not.toContain('unpkg.com');
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'swagger-init.js']) {
      expect((await fetch(`${t.url}/docs/assets/${asset}`)).status).toBe(200);
    }
    expect((await fetch(`${t.url}/docs/assets/package.json`)).status).toBe(404);
  });
});
