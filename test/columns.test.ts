import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { enc, startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

/** Polls a project's rows until no cell is loading; returns them. */
async function settledRows(t: TestService, projectId: string, timeoutMs = 15_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await t.api('GET', `/projects/${projectId}/rows?page_size=100`);
    const loading = r.body.rows.some((row: any) => Object.values(row.company).some((c: any) => c.is_loading));
    if (!loading) return r.body.rows;
    if (Date.now() > deadline) throw new Error('cells still loading');
    await Bun.sleep(20);
  }
}

describe.each(DIALECTS)('tool columns on %s', (dialect) => {
  let t: TestService;
  let pid: string;
  const csv =
    'Name,Website,Phone\nAcme,https://www.acme.example.co.uk/about,+33 1 42 68 53 00\nGlobex,,020 7946 0958\nInitech,initech.com,not a phone\n';
  beforeAll(async () => {
    t = await startTestService(dialect);
    const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    pid = r.body.project_id;
    await waitForBuilder(t, pid);
  });
  afterAll(() => t.stop());
  const col = (body: unknown) => t.api('POST', `/projects/${pid}/columns`, { body });
  const byName = (rows: any[], name: string) => rows.find((r) => r.company.Name.value === name);

  test('GET /tools lists each tool with its config schema, what it produces and its cost', async () => {
    const r = await t.api('GET', '/tools');
    expect(r.status).toBe(200);
    const formula = r.body.find((x: any) => x.tool_id === 'formula');
    expect(formula).toMatchObject({ name: 'Formula', category: 'transform', cost: { credits: 0 } });
    expect(formula.config_schema.required).toEqual(['expression']);
    expect(formula.produces[0].field).toBe('value');
  });

  test('GET /tools/search finds tools by what they do, best match first', async () => {
    const r = await t.api('GET', '/tools/search?q=phone');
    expect(r.body[0].tool_id).toBe('phone_normalizer');
    expect((await t.api('GET', '/tools/search?q=zzzz')).body).toEqual([]);
    expect((await t.api('GET', '/tools/search')).status).toBe(422);
  });

  test('a new tool column answers 201 and gives every existing row a pending cell', async () => {
    const r = await col({ name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Domain',
      required: false,
      type: 'tool',
      tool_id: 'domain_normalizer',
      auto_run: false,
      config: { value: '{{Website}}' },
      // The field of its values that stands for them (what the console shows of an object value).
      primary_field: 'domain',
    });
    const rows = await t.api('GET', `/projects/${pid}/rows`);
    for (const row of rows.body.rows)
      expect(row.company.Domain).toEqual({ name: 'Domain', value: null, status: 'pending', is_loading: false });
    const cols = await t.api('GET', `/projects/${pid}/columns`);
    expect(cols.body.map((c: any) => [c.name, c.type, c.required])).toEqual([
      ['Name', 'input', true],
      ['Website', 'input', true],
      ['Phone', 'input', true],
      ['Domain', 'tool', false],
    ]);
  });

  test('run_pending_columns queues the pending cells; they fill in the background', async () => {
    const r = await t.api('POST', `/projects/${pid}/columns/run`, { body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ queued: 3 });
    const rows = await settledRows(t, pid);
    expect(byName(rows, 'Acme').company.Domain).toEqual({ name: 'Domain', value: 'example.co.uk', status: 'completed', is_loading: false });
    expect(byName(rows, 'Initech').company.Domain.value).toBe('initech.com');
    // An empty input is not a failure: the cell is skipped and says why.
    expect(byName(rows, 'Globex').company.Domain).toMatchObject({ status: 'skipped', value: null, error: 'missing input: value' });
    expect((await t.api('POST', `/projects/${pid}/columns/run`, { body: {} })).body).toEqual({ queued: 0 });
  });

  test('tool values can be filtered and sorted like input values, and by cell status', async () => {
    const cols = (await t.api('GET', `/projects/${pid}/columns`)).body;
    const domain = cols.find((c: any) => c.name === 'Domain').col_id;
    const f = await t.api(
      'GET',
      `/projects/${pid}/rows?filter_groups=${enc([{ type: 'and', rules: [{ col_id: domain, operator: 'ends_with', value: '.CO.UK' }] }])}`,
    );
    expect(f.body.rows.map((r: any) => r.company.Name.value)).toEqual(['Acme']);
    const s = await t.api(
      'GET',
      `/projects/${pid}/rows?filter_groups=${enc([{ type: 'and', rules: [{ col_id: domain, field: 'status', operator: 'eq', value: 'skipped' }] }])}`,
    );
    expect(s.body.rows.map((r: any) => r.company.Name.value)).toEqual(['Globex']);
  });

  test('a run condition skips the rows where it is false', async () => {
    const r = await col({
      name: 'E164',
      tool_id: 'phone_normalizer',
      config: { phone: '{{Phone}}', default_country: 'GB' },
      run_condition: 'Name != "Acme"',
    });
    expect(r.status).toBe(201);
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [r.body.col_id] } });
    const rows = await settledRows(t, pid);
    expect(byName(rows, 'Acme').company.E164.status).toBe('skipped');
    expect(byName(rows, 'Acme').company.E164.error).toContain('run condition is false');
    expect(byName(rows, 'Globex').company.E164).toMatchObject({ status: 'completed', value: '+442079460958' });
    expect(byName(rows, 'Initech').company.E164).toMatchObject({ status: 'no_result', value: null });
  });

  test('a column that reads another tool column waits for it, then runs', async () => {
    const site = await col({ name: 'Site', tool_id: 'formula', config: { expression: '"https://www." & $lowercase(Name) & ".io"' } });
    const dom = await col({ name: 'Site domain', tool_id: 'domain_normalizer', config: { value: '{{Site}}' } });
    // Start the dependent first: it must wait for Site rather than skip for missing input.
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [dom.body.col_id] } });
    await Bun.sleep(100);
    const mid = await t.api('GET', `/projects/${pid}/rows`);
    expect(mid.body.rows[0].company['Site domain']).toMatchObject({ status: 'queued', is_loading: true });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [site.body.col_id] } });
    const rows = await settledRows(t, pid);
    expect(byName(rows, 'Acme').company['Site domain']).toMatchObject({ status: 'completed', value: 'acme.io' });
  });

  test('with auto_run, a row added later is enriched on its own', async () => {
    const auto = await col({ name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' }, auto_run: true });
    expect(auto.body.auto_run).toBe(true);
    const added = await t.api('POST', `/projects/${pid}/rows`, {
      body: { company: { Name: 'Umbrella', Website: 'umbrella.example.com', Phone: null } },
    });
    expect(added.status).toBe(201);
    await settledRows(t, pid);
    const row = await t.api('GET', `/projects/${pid}/rows/${added.body.row_id}`);
    expect(row.body.company.Upper).toEqual({ name: 'Upper', value: 'UMBRELLA', status: 'completed', is_loading: false });
    expect(row.body.company.Domain.status).toBe('pending'); // not auto-run
  });

  test('a bad column is 422 naming each problem, and nothing is added', async () => {
    const before = (await t.api('GET', `/projects/${pid}/columns`)).body.length;
    const cases: [unknown, string][] = [
      [{ name: 'X', tool_id: 'nope' }, 'tool_id'],
      [{ name: 'X', tool_id: 'phone_normalizer', config: { phone: 5 } }, 'config.phone'],
      [{ name: 'X', tool_id: 'phone_normalizer', config: { phone: '{{Missing}}' } }, 'config'],
      [{ name: 'Domain', tool_id: 'formula', config: { expression: '1' } }, 'name'],
      [{ name: 'X', tool_id: 'formula', config: { expression: '1' }, run_condition: 'Name = ' }, 'run_condition'],
      [{ name: 'X' }, 'tool_id'],
      [{ name: 'X', tool_id: 'formula', config: { expression: '$uppercase(' } }, 'config.expression'],
    ];
    for (const [body, path] of cases) {
      const r = await col(body);
      expect(r.status).toBe(422);
      expect(r.body.detail.errors.map((e: any) => e.path)).toContain(path);
    }
    expect((await t.api('GET', `/projects/${pid}/columns`)).body.length).toBe(before);
  });

  test('run_pending_columns refuses unknown or input column ids', async () => {
    const cols = (await t.api('GET', `/projects/${pid}/columns`)).body;
    const r = await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [cols[0].col_id] } });
    expect(r.status).toBe(422);
  });

  test('saved filters round-trip and are checked like the rows endpoint', async () => {
    const cols = (await t.api('GET', `/projects/${pid}/columns`)).body;
    const groups = [{ type: 'and', rules: [{ col_id: cols[0].col_id, operator: 'contains', value: 'ac' }] }];
    expect((await t.api('GET', `/projects/${pid}/filters`)).body).toEqual({ filter_groups: [] });
    expect((await t.api('PUT', `/projects/${pid}/filters`, { body: { filter_groups: groups } })).status).toBe(200);
    expect((await t.api('GET', `/projects/${pid}/filters`)).body).toEqual({ filter_groups: groups });
    const bad = await t.api('PUT', `/projects/${pid}/filters`, {
      body: { filter_groups: [{ type: 'and', rules: [{ col_id: 'x', operator: 'eq', value: 1 }] }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.message).toContain('unknown column');
  });

  test('deleting rows: they disappear from lists, counts and lookups; foreign ids are ignored', async () => {
    const rows = (await t.api('GET', `/projects/${pid}/rows`)).body.rows;
    const victim = rows.find((r: any) => r.company.Name.value === 'Initech').id;
    const r = await t.api('DELETE', `/projects/${pid}/rows`, { body: { row_ids: [victim, '999999999', 'abc'] } });
    expect(r.body).toEqual({ deleted: 1 });
    expect((await t.api('GET', `/projects/${pid}/rows/${victim}`)).status).toBe(404);
    const after = await t.api('GET', `/projects/${pid}/rows`);
    expect(after.body.total_rows).toBe(rows.length - 1);
    expect((await t.api('GET', `/projects/${pid}`)).body.row_count).toBe(rows.length - 1);
    const cols = (await t.api('GET', `/projects/${pid}/columns`)).body;
    const f = await t.api(
      'GET',
      `/projects/${pid}/rows?filter_groups=${enc([{ type: 'and', rules: [{ col_id: cols[0].col_id, operator: 'eq', value: 'initech' }] }])}`,
    );
    expect(f.body.total_rows).toBe(0);
    expect((await t.api('DELETE', `/projects/${pid}/rows`, { body: { row_ids: [victim] } })).body).toEqual({ deleted: 0 });
  });

  test('another workspace cannot see, change or delete the project (404)', async () => {
    const other = await t.newWorkspace();
    const h = { 'service-api-key': other.key };
    expect((await t.api('GET', `/projects/${pid}/columns`, { headers: h })).status).toBe(404);
    expect((await t.api('POST', `/projects/${pid}/columns`, { headers: h, body: { name: 'x' } })).status).toBe(404);
    expect((await t.api('DELETE', `/projects/${pid}`, { headers: h })).status).toBe(404);
    expect((await t.api('DELETE', `/projects/${pid}/rows`, { headers: h, body: { row_ids: ['1'] } })).status).toBe(404);
  });

  test('a deleted project answers 404 and leaves the list', async () => {
    const p = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'a.example.com' } } });
    await waitForBuilder(t, p.body.project_id);
    expect((await t.api('DELETE', `/projects/${p.body.project_id}`)).body).toEqual({ deleted: true });
    expect((await t.api('GET', `/projects/${p.body.project_id}`)).status).toBe(404);
    const list = await t.api('GET', '/projects');
    expect(list.body.projects.map((x: any) => x.id)).not.toContain(p.body.project_id);
  });
});
