import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startTestService, type TestService } from './support/test-service.ts';

describe('OpenAPI document', () => {
  let t: TestService;
  let doc: any;
  beforeAll(async () => {
    t = await startTestService('sqlite');
    const res = await fetch(`${t.url}/docs/json`);
    expect(res.status).toBe(200);
    doc = await res.json();
  });
  afterAll(() => t.stop());

  test('is a valid OpenAPI document according to swagger-parser', async () => {
    const api = await SwaggerParser.validate(structuredClone(doc));
    expect(api.info.title).toBe('Workflow Service API');
  });

  test('lists the seven endpoints of the spec under the base path', () => {
    const base = '/api/enterprise';
    const expected: [string, string][] = [
      ['get', '/project-builders'],
      ['post', '/projects'],
      ['get', '/projects'],
      ['get', '/projects/{project_id}'],
      ['post', '/projects/{project_id}/rows'],
      ['get', '/projects/{project_id}/rows'],
      ['get', '/projects/{project_id}/rows/{row_id}'],
    ];
    for (const [method, path] of expected) expect(doc.paths[base + path]?.[method]).toBeDefined();
  });

  test('documents parameters, defaults, bounds and the spec status codes from the operation schemas', () => {
    const list = doc.paths['/api/enterprise/projects'].get;
    const limit = list.parameters.find((p: any) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } });
    const create = doc.paths['/api/enterprise/projects'].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '500']));
    const rows = doc.paths['/api/enterprise/projects/{project_id}/rows'];
    expect(Object.keys(rows.post.responses)).toEqual(expect.arrayContaining(['403', '404']));
    expect(Object.keys(rows.get.responses)).toEqual(expect.arrayContaining(['404', '422']));
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'service-api-key' });
  });

  test('the Swagger UI page and its assets are served locally (no CDN)', async () => {
    const html = await (await fetch(`${t.url}/docs`)).text();
    expect(html).toContain('/api/enterprise/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toContain('unpkg.com');
    const js = await fetch(`${t.url}/docs/assets/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
  });
});
