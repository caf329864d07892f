import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

describe.each(DIALECTS)('projects API on %s', (dialect) => {
  let t: TestService;
  const names = ['Alpha dentists', 'Beta bakers', 'Gamma ALPHA garages', 'Zürich Bäckereien', 'Delta'];
  const ids: string[] = [];
  beforeAll(async () => {
    t = await startTestService(dialect);
    for (const name of names) {
      const r = await t.api('POST', '/projects', {
        body: { builder_id: 'manual_list_builder', form_data: { companies: 'a.example.com\nB Corp' }, name },
      });
      expect(r.status).toBe(201);
      ids.push(r.body.project_id);
      await waitForBuilder(t, r.body.project_id);
      await Bun.sleep(3); // distinct updatedAt values
    }
  });
  afterAll(() => t.stop());

  describe('POST /projects', () => {
    const count = async () => (await t.api('GET', '/projects')).body.total;

    test('an unknown builder_id is 400 naming the registered ids, and creates nothing', async () => {
      const before = await count();
      const r = await t.api('POST', '/projects', { body: { builder_id: 'nope', form_data: {} } });
      expect(r.status).toBe(400);
      expect(r.body.detail.message).toContain('google_maps_search');
      expect(await count()).toBe(before);
    });

    test('an invalid form_data is 400 with each bad field named, and creates nothing', async () => {
      const before = await count();
      const r = await t.api('POST', '/projects', {
        body: { builder_id: 'google_maps_search', form_data: { query: '', max_results: '10', extra: true } },
      });
      expect(r.status).toBe(400);
      const paths = r.body.detail.errors.map((e: any) => e.path).sort();
      expect(paths).toEqual(['form_data.extra', 'form_data.max_results', 'form_data.query']);
      expect(await count()).toBe(before);
    });

    test('max_results must be an integer within the builder range', async () => {
      for (const max of [0, 501, 2.5]) {
        const r = await t.api('POST', '/projects', {
          body: { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: max } },
        });
        expect(r.status).toBe(400);
        expect(r.body.detail.errors[0].path).toBe('form_data.max_results');
      }
    });

    test('nested search filters are checked too (a range must be {min, max})', async () => {
      const r = await t.api('POST', '/projects', {
        body: { builder_id: 'companies_search_builder', form_data: { filters: { revenue_range: { low: 1 } }, max_results: 5 } },
      });
      expect(r.status).toBe(400);
      expect(r.body.detail.errors.map((e: any) => e.path)).toContain('form_data.filters.revenue_range.low');
    });

    test('a people search with include_similar_titles and ranges is accepted and runs', async () => {
      const r = await t.api('POST', '/projects', {
        body: {
          builder_id: 'people_search_builder',
          form_data: {
            filters: { person_titles: ['CTO'], include_similar_titles: true, revenue_range: { min: 1, max: 5000000 }, q_keywords: '' },
            max_results: 7,
          },
        },
      });
      expect(r.status).toBe(201);
      const p = await waitForBuilder(t, r.body.project_id);
      expect(p.row_count).toBe(7);
      expect(p.first_company_data.Title).toBe('CTO');
    });

    test('malformed JSON, an empty body and a non-object body are 400', async () => {
      for (const rawBody of ['{"builder_id":', '', '[1,2]', '"text"']) {
        const r = await t.api('POST', '/projects', { rawBody, headers: { 'content-type': 'application/json' } });
        expect(r.status).toBe(400);
        expect(typeof r.body.detail.message).toBe('string');
      }
    });

    test('a CSV with a duplicated header is 400 and says which', async () => {
      const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'A,B,A\n1,2,3' } } });
      expect(r.status).toBe(400);
      expect(r.body.detail.message).toContain('"A" appears twice');
    });

    test('when the queue does not take the build, the project is still created and its job waits in the outbox', async () => {
      const other = await startTestService(dialect);
      try {
        await other.service.kernel.queue.close();
        const r = await other.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'x' } } });
        expect(r.status).toBe(201);
        const p = await other.api('GET', `/projects/${r.body.project_id}`);
        expect(p.body.builder_status.type).toBe('queued');
        const waiting = await other.service.kernel.storage.outbox.due(0, 10);
        expect(waiting.map((j) => j.type)).toEqual(['builder.run']);
      } finally {
        await other.stop();
      }
    });
  });

  describe('GET /projects', () => {
    test('returns an object (never a bare array), newest update first, with defaults', async () => {
      const r = await t.api('GET', '/projects');
      expect(r.status).toBe(200);
      expect(Array.isArray(r.body)).toBe(false);
      expect(r.body.limit).toBe(50);
      expect(r.body.offset).toBe(0);
      expect(r.body.page).toBe(1);
      const times = r.body.projects.map((p: any) => Date.parse(p.updatedAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    test('summaries carry the spec fields with ISO 8601 timestamps and the row count', async () => {
      const r = await t.api('GET', `/projects?name_search=${encodeURIComponent('Beta bakers')}`);
      expect(r.body.projects).toHaveLength(1);
      const p = r.body.projects[0];
      expect(Object.keys(p).sort()).toEqual(['company_count', 'createdAt', 'creator_id', 'id', 'name', 'updatedAt']);
      expect(p.id).toBe(ids[1]);
      expect(p.company_count).toBe(2);
      expect(new Date(p.createdAt).toISOString()).toBe(p.createdAt);
      expect(new Date(p.updatedAt).toISOString()).toBe(p.updatedAt);
    });

    test('name_search is a case-insensitive substring filter and total counts all matches', async () => {
      const r = await t.api('GET', '/projects?name_search=alpha&limit=1');
      expect(r.body.total).toBe(2);
      expect(r.body.projects).toHaveLength(1);
      const u = await t.api('GET', `/projects?name_search=${encodeURIComponent('zürich')}`);
      expect(u.body.projects.map((p: any) => p.name)).toEqual(['Zürich Bäckereien']);
      const none = await t.api('GET', '/projects?name_search=%25');
      expect(none.body.total).toBe(0); // "%" is a literal, not a wildcard
    });

    test('page sets offset = (page - 1) * limit and overrides offset', async () => {
      const all = (await t.api('GET', '/projects?limit=200')).body.projects.map((p: any) => p.id);
      const r = await t.api('GET', '/projects?limit=2&page=2&offset=0');
      expect(r.body.offset).toBe(2);
      expect(r.body.page).toBe(2);
      expect(r.body.projects.map((p: any) => p.id)).toEqual(all.slice(2, 4));
    });

    test('without page, page is reported as floor(offset / limit) + 1', async () => {
      const r = await t.api('GET', '/projects?limit=2&offset=3');
      expect(r.body.page).toBe(2);
      expect(r.body.offset).toBe(3);
    });

    test('paging bounds inside the range are accepted', async () => {
      for (const q of ['limit=1', 'limit=200', 'offset=0', 'page=1', 'offset=100000']) {
        expect((await t.api('GET', `/projects?${q}`)).status).toBe(200);
      }
    });

    test('out-of-range or non-integer paging values are 422 naming the parameter', async () => {
      for (const [q, param] of [
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['offset=-1', 'offset'],
        ['page=0', 'page'],
        ['limit=abc', 'limit'],
        ['page=1.5', 'page'],
      ]) {
        const r = await t.api('GET', `/projects?${q}`);
        expect(r.status).toBe(422);
        expect(r.body.detail.errors[0].path).toBe(param);
      }
    });
  });

  describe('GET /projects/{id}', () => {
    test('returns the details fields of the spec', async () => {
      const r = await t.api('GET', `/projects/${ids[0]}`);
      expect(r.status).toBe(200);
      for (const f of ['columns', 'first_company_data', 'row_count', 'builder_status']) expect(r.body).toHaveProperty(f);
      expect(r.body.columns[0]).toMatchObject({ name: 'Name', required: true, type: 'input' });
      expect(r.body.columns[0].col_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.body.first_company_data).toEqual({ Name: null, Domain: 'a.example.com' });
      expect(r.body.row_count).toBe(2);
      expect(r.body.builder_status).toEqual({ type: 'completed', error_message: null });
    });

    test('a missing project, a malformed id and another workspace’s project are all 404', async () => {
      const other = await t.newWorkspace();
      const theirs = await t.api('GET', `/projects/${ids[0]}`, { headers: { 'service-api-key': other.key } });
      expect(theirs.status).toBe(404);
      expect((await t.api('GET', '/projects/00000000-0000-7000-8000-000000000000')).status).toBe(404);
      expect((await t.api('GET', '/projects/not-a-uuid')).status).toBe(404);
      const list = await t.api('GET', '/projects', { headers: { 'service-api-key': other.key } });
      expect(list.body.total).toBe(0);
    });
  });

  describe('PATCH /projects/{id}', () => {
    test('renames the project: the answer is its details, and the list finds it by its new name', async () => {
      const made = await t.api('POST', '/projects', {
        body: { builder_id: 'manual_list_builder', form_data: { companies: 'c.example.com' }, name: 'Before' },
      });
      const id = made.body.project_id;
      await waitForBuilder(t, id);
      const r = await t.api('PATCH', `/projects/${id}`, { body: { name: 'Épsilon clinics' } });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ ...(await t.api('GET', `/projects/${id}`)).body, name: 'Épsilon clinics' });
      expect(r.body.row_count).toBe(1);
      expect((await t.api('GET', `/projects/${id}`)).body.name).toBe('Épsilon clinics');
      const found = await t.api('GET', '/projects?name_search=ÉPSILON');
      expect(found.body.projects.map((p: any) => p.id)).toEqual([id]);
      expect((await t.api('GET', '/projects?name_search=Before')).body.total).toBe(0);
    });

    test('a blank, empty, too long or extra field is 422 and the name stays', async () => {
      for (const body of [{ name: '' }, { name: '   ' }, { name: 'x'.repeat(256) }, {}, { name: 'Ok', builder_id: 'x' }]) {
        const r = await t.api('PATCH', `/projects/${ids[4]}`, { body });
        expect(r.status).toBe(422);
      }
      expect((await t.api('GET', `/projects/${ids[4]}`)).body.name).toBe('Delta');
    });

    test('another workspace’s project is 404 and keeps its name', async () => {
      const other = await t.newWorkspace();
      const r = await t.api('PATCH', `/projects/${ids[4]}`, { body: { name: 'Stolen' }, headers: { 'service-api-key': other.key } });
      expect(r.status).toBe(404);
      expect((await t.api('PATCH', '/projects/00000000-0000-7000-8000-000000000000', { body: { name: 'x' } })).status).toBe(404);
      expect((await t.api('GET', `/projects/${ids[4]}`)).body.name).toBe('Delta');
    });
  });
});
