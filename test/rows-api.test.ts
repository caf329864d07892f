import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { enc, startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

describe.each(DIALECTS)('rows API on %s', (dialect) => {
  let t: TestService;
  let projectId: string;
  const rowsPath = () => `/projects/${projectId}/rows`;
  beforeAll(async () => {
    t = await startTestService(dialect, { MAX_BODY_BYTES: '65536' });
    // Unicode column names come straight from the CSV header.
    const r = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name,Straße,名前 🚀\nSeed,Hauptstraße 1,種\n' } },
    });
    projectId = r.body.project_id;
    await waitForBuilder(t, projectId);
  });
  afterAll(() => t.stop());

  const count = async () => (await t.api('GET', rowsPath())).body.total_rows;

  test('adding a row answers with its id, a message and no error detail', async () => {
    const r = await t.api('POST', rowsPath(), { body: { company: { Name: 'Acme', Straße: 'Ring 2', '名前 🚀': 'アクメ' } } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ row_id: expect.any(String), message: expect.any(String), error_detail: null });
    const row = await t.api('GET', `${rowsPath()}/${r.body.row_id}`);
    expect(row.status).toBe(200);
    expect(row.body).toEqual({
      id: r.body.row_id,
      project_id: projectId,
      company: {
        Name: { name: 'Name', value: 'Acme', status: 'default', is_loading: false },
        Straße: { name: 'Straße', value: 'Ring 2', status: 'default', is_loading: false },
        '名前 🚀': { name: '名前 🚀', value: 'アクメ', status: 'default', is_loading: false },
      },
    });
  });

  test('values keep their JSON type (numbers, booleans, arrays, null)', async () => {
    const r = await t.api('POST', rowsPath(), { body: { company: { Name: 42, Straße: ['a', 'b'], '名前 🚀': null } } });
    const row = await t.api('GET', `${rowsPath()}/${r.body.row_id}`);
    expect(row.body.company.Name.value).toBe(42);
    expect(row.body.company.Straße.value).toEqual(['a', 'b']);
    expect(row.body.company['名前 🚀'].value).toBeNull();
  });

  test('missing input columns are 403 with detail.missing_columns, and nothing is written', async () => {
    const before = await count();
    const r = await t.api('POST', rowsPath(), { body: { company: { Name: 'Only name' } } });
    expect(r.status).toBe(403);
    expect(r.body.detail.missing_columns).toEqual(['Straße', '名前 🚀']);
    expect(r.body.detail.message).toContain('Straße');
    expect(await count()).toBe(before);
  });

  test('a key that names no column is 403 with detail.message naming it', async () => {
    const before = await count();
    const r = await t.api('POST', rowsPath(), { body: { company: { Name: 'x', Straße: 'y', '名前 🚀': 'z', Bogus: 1 } } });
    expect(r.status).toBe(403);
    expect(r.body.detail.message).toContain('"Bogus"');
    expect(await count()).toBe(before);
  });

  test('an invalid payload (bad JSON, no company object) is 403', async () => {
    for (const init of [
      { rawBody: '{"company": ', headers: { 'content-type': 'application/json' } },
      { body: { company: 'Acme' } },
      { body: { rows: [] } },
      { body: [] },
    ]) {
      const r = await t.api('POST', rowsPath(), init);
      expect(r.status).toBe(403);
      expect(typeof r.body.detail.message).toBe('string');
    }
  });

  test('a body over MAX_BODY_BYTES is 413 and writes nothing', async () => {
    const before = await count();
    const r = await t.api('POST', rowsPath(), { body: { company: { Name: 'x'.repeat(70_000), Straße: '', '名前 🚀': '' } } });
    expect(r.status).toBe(413);
    expect(r.body.detail).toContain('MAX_BODY_BYTES');
    expect(await count()).toBe(before);
  });

  test('another workspace gets 404 for the project, its rows and a row, whatever the body', async () => {
    const other = await t.newWorkspace();
    const h = { 'service-api-key': other.key };
    expect((await t.api('POST', rowsPath(), { headers: h, body: { company: { Name: 'x', Straße: 'y', '名前 🚀': 'z' } } })).status).toBe(
      404,
    );
    expect((await t.api('POST', rowsPath(), { headers: h, body: { nonsense: true } })).status).toBe(404);
    expect((await t.api('GET', rowsPath(), { headers: h })).status).toBe(404);
    expect((await t.api('GET', `${rowsPath()}?filter_groups=[bad`, { headers: h })).status).toBe(404);
    const first = (await t.api('GET', rowsPath())).body.rows[0].id;
    expect((await t.api('GET', `${rowsPath()}/${first}`, { headers: h })).status).toBe(404);
  });

  test('a row id that does not exist, is malformed, or belongs to another project is 404', async () => {
    expect((await t.api('GET', `${rowsPath()}/999999999`)).status).toBe(404);
    expect((await t.api('GET', `${rowsPath()}/abc`)).status).toBe(404);
    const p2 = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'x.example.com' } } });
    await waitForBuilder(t, p2.body.project_id);
    const theirRow = (await t.api('GET', `/projects/${p2.body.project_id}/rows`)).body.rows[0].id;
    expect((await t.api('GET', `${rowsPath()}/${theirRow}`)).status).toBe(404);
    expect((await t.api('GET', `/projects/${p2.body.project_id}/rows/${theirRow}`)).status).toBe(200);
  });

  test('many rows added at once each get their own id and values (concurrent inserts are written together)', async () => {
    const before = await count();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        t.api('POST', rowsPath(), { body: { company: { Name: `Burst ${i}`, Straße: `s${i}`, '名前 🚀': null } } }),
      ),
    );
    expect(answers.every((a) => a.status === 201)).toBe(true);
    const ids = answers.map((a) => a.body.row_id);
    expect(new Set(ids).size).toBe(40);
    expect(await count()).toBe(before + 40);
    for (const i of [0, 17, 39]) {
      const row = await t.api('GET', `${rowsPath()}/${ids[i]}`);
      expect(row.body.company.Name.value).toBe(`Burst ${i}`);
      expect(row.body.company.Straße.value).toBe(`s${i}`);
    }
  });

  test('a filtered total follows every change: added, deleted and enriched rows', async () => {
    const cols = (await t.api('GET', `/projects/${projectId}/columns`)).body;
    const name = cols.find((c: any) => c.name === 'Name').col_id;
    const q = `${rowsPath()}?filter_groups=${enc([{ type: 'and', rules: [{ col_id: name, operator: 'contains', value: 'zeta' }] }])}`;
    const total = async () => (await t.api('GET', q)).body.total_rows;
    expect(await total()).toBe(0);
    expect(await total()).toBe(0); // asked twice: the second answer may come from the cached count
    const added = await t.api('POST', rowsPath(), { body: { company: { Name: 'Zeta One', Straße: '', '名前 🚀': '' } } });
    expect(await total()).toBe(1);
    await t.api('POST', rowsPath(), { body: { company: { Name: 'zeta two', Straße: '', '名前 🚀': '' } } });
    expect(await total()).toBe(2);
    await t.api('DELETE', rowsPath(), { body: { row_ids: [added.body.row_id] } });
    expect(await total()).toBe(1);
    const tool = await t.api('POST', `/projects/${projectId}/columns`, {
      body: { name: 'Shout', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    const shout = enc([{ type: 'and', rules: [{ col_id: tool.body.col_id, operator: 'eq', value: 'ZETA TWO' }] }]);
    expect((await t.api('GET', `${rowsPath()}?filter_groups=${shout}`)).body.total_rows).toBe(0);
    await t.api('POST', `/projects/${projectId}/columns/run`, { body: { col_ids: [tool.body.col_id] } });
    const deadline = Date.now() + 10_000;
    while ((await t.api('GET', `${rowsPath()}?filter_groups=${shout}`)).body.total_rows !== 1 && Date.now() < deadline) await Bun.sleep(20);
    expect((await t.api('GET', `${rowsPath()}?filter_groups=${shout}`)).body.total_rows).toBe(1);
  });

  describe('paging', () => {
    let pid: string;
    beforeAll(async () => {
      const lines = Array.from({ length: 23 }, (_, i) => `Company ${String(i + 1).padStart(2, '0')}`).join('\n');
      const r = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: lines } } });
      pid = r.body.project_id;
      await waitForBuilder(t, pid);
    });
    const names = (body: any) => body.rows.map((r: any) => r.company.Name.value);

    test('defaults to page 1 of 50 rows, in insertion order', async () => {
      const r = await t.api('GET', `/projects/${pid}/rows`);
      expect(r.status).toBe(200);
      expect(r.body.page).toBe(1);
      expect(r.body.page_size).toBe(50);
      expect(r.body.total_rows).toBe(23);
      expect(r.body.total_pages).toBe(1);
      expect(names(r.body)[0]).toBe('Company 01');
      expect(names(r.body)[22]).toBe('Company 23');
    });

    test('page and page_size select the right slice; total_pages rounds up', async () => {
      const r = await t.api('GET', `/projects/${pid}/rows?page=3&page_size=10`);
      expect(names(r.body)).toEqual(['Company 21', 'Company 22', 'Company 23']);
      expect(r.body.total_pages).toBe(3);
      expect(r.body.total_rows).toBe(23);
    });

    test('page_size 1 and 100 are the bounds', async () => {
      expect((await t.api('GET', `/projects/${pid}/rows?page_size=1`)).body.rows).toHaveLength(1);
      expect((await t.api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows).toHaveLength(23);
    });

    test('a page past the end is empty but still reports the totals', async () => {
      const r = await t.api('GET', `/projects/${pid}/rows?page=99&page_size=10`);
      expect(r.status).toBe(200);
      expect(r.body.rows).toEqual([]);
      expect(r.body.total_rows).toBe(23);
    });

    test('out-of-range paging values are 422', async () => {
      for (const q of ['page=0', 'page=-1', 'page_size=0', 'page_size=101', 'page=x', 'page_size=2.5']) {
        const r = await t.api('GET', `/projects/${pid}/rows?${q}`);
        expect(r.status).toBe(422);
        expect(r.body.detail.errors[0].path).toBe(q.split('=')[0]);
      }
    });
  });
});
