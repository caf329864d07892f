import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { openStorage, type SqlStorage } from '../adapters/storage/sql-storage.ts';
import { DIALECTS } from './support/databases.ts';
import { openSse } from './support/sse.ts';
import { enc, startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

/** PATCH /projects/{id}/columns/{col_id} (update_column): renames and tool settings, and what a rename must keep. */
describe.each(DIALECTS)('changing a column on %s', (dialect) => {
  let t: TestService;
  let other: SqlStorage;
  beforeAll(async () => {
    t = await startTestService(dialect);
    // A second storage on the same database: another process's column cache.
    other = await openStorage(t.service.kernel.config.databaseUrl, { migrate: false });
  });
  afterAll(async () => {
    await other.close();
    await t.stop();
  });

  /** A project of `csv`, its columns by name, and helpers over it. */
  async function project(csv: string) {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    const id = made.body.project_id as string;
    await waitForBuilder(t, id);
    const columns = async () => (await t.api('GET', `/projects/${id}/columns`)).body as any[];
    const col = async (name: string) => (await columns()).find((c) => c.name === name);
    const patch = (colId: string, body: unknown, headers: Record<string, string> = {}) =>
      t.api('PATCH', `/projects/${id}/columns/${colId}`, { body, headers });
    const addTool = async (body: Record<string, unknown>) => {
      const r = await t.api('POST', `/projects/${id}/columns`, { body });
      expect(r.status).toBe(201);
      return r.body;
    };
    const rows = async (query = '') => (await t.api('GET', `/projects/${id}/rows?page_size=100${query}`)).body.rows as any[];
    const settled = async () => {
      for (let i = 0; i < 600; i++) {
        const page = await rows();
        if (!page.some((r) => Object.values(r.company).some((c: any) => c.is_loading))) return page;
        await Bun.sleep(25);
      }
      throw new Error('cells still loading');
    };
    return { id, columns, col, patch, addTool, rows, settled };
  }

  test('a rename keeps the values, the unique key, saved filters and {{templates}} working', async () => {
    const p = await project('Name,Website\nAcme,acme.com\nGlobex,globex.com\n');
    const website = await p.col('Website');
    expect((await t.api('PUT', `/projects/${p.id}/settings`, { body: { unique_columns: ['Website'] } })).status).toBe(200);
    const filters = [{ type: 'and', rules: [{ col_id: website.col_id, operator: 'contains', value: 'globex' }] }];
    expect((await t.api('PUT', `/projects/${p.id}/filters`, { body: { filter_groups: filters } })).status).toBe(200);
    const domain = await p.addTool({ name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{ Website }}' } });
    const formula = await p.addTool({ name: 'Label', tool_id: 'formula', config: { expression: '"site: {{Website}}"' } });
    const theirs = await other.projects.get(t.workspaceId, p.id);
    expect((await other.projects.columns(theirs as any)).map((c) => c.name)).toContain('Website');

    const r = await p.patch(website.col_id, { name: 'Company site' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...website, name: 'Company site' });
    // Values stay, under the new name.
    const rows = await p.rows();
    expect(rows.map((row) => row.company['Company site'].value)).toEqual(['acme.com', 'globex.com']);
    expect(rows[0].company.Website).toBeUndefined();
    // The unique key follows: a row with an existing site answers the existing row.
    expect((await t.api('GET', `/projects/${p.id}`)).body.settings.unique_columns).toEqual(['Company site']);
    const again = await t.api('POST', `/projects/${p.id}/rows`, {
      body: { company: { Name: 'Acme again', 'Company site': 'https://www.ACME.com/' } },
    });
    expect(again.status).toBe(200);
    expect(again.body.row_id).toBe(rows[0].id);
    // Saved filters name columns by col_id: they still apply.
    const saved = (await t.api('GET', `/projects/${p.id}/filters`)).body.filter_groups;
    expect(saved).toEqual(filters);
    expect((await p.rows(`&filter_groups=${enc(saved)}`)).map((row) => row.company.Name.value)).toEqual(['Globex']);
    // Templates of other columns name the new name, and the columns run with it.
    expect((await p.col('Domain')).config).toEqual({ value: '{{Company site}}' });
    expect((await p.col('Label')).config).toEqual({ expression: '"site: {{Company site}}"' });
    await t.api('POST', `/projects/${p.id}/columns/run`, { body: { col_ids: [domain.col_id, formula.col_id] } });
    const done = await p.settled();
    expect(done.map((row) => [row.company.Domain.value, row.company.Label.value])).toEqual([
      ['acme.com', 'site: acme.com'],
      ['globex.com', 'site: globex.com'],
    ]);
    // Another process reads the new columns, not the ones it remembered.
    const theirsNow = await other.projects.get(t.workspaceId, p.id);
    expect((await other.projects.columns(theirsNow as any)).map((c) => c.name)).toEqual(['Name', 'Company site', 'Domain', 'Label']);
  });

  test('a rename reaches the event stream as a columns event', async () => {
    const p = await project('Name\nAcme\n');
    const s = await openSse(`${t.url}/projects/${p.id}/events`, { 'service-api-key': t.key });
    try {
      expect((await p.patch((await p.col('Name')).col_id, { name: 'Company' })).status).toBe(200);
      await s.waitFor((e) => e.event === 'columns');
    } finally {
      s.close();
    }
  });

  test('a name another column holds is a 409; nothing changes', async () => {
    const p = await project('Name,Website\nAcme,acme.com\n');
    const r = await p.patch((await p.col('Website')).col_id, { name: 'Name' });
    expect(r.status).toBe(409);
    expect(r.body.detail).toBe('Another column of this project is named "Name": choose another name');
    expect((await p.columns()).map((c) => c.name)).toEqual(['Name', 'Website']);
  });

  test('a run_condition or a formula reading the old name as a field is a 409 naming that column; nothing changes', async () => {
    const p = await project('Name,Country\nAcme,France\n');
    await p.addTool({ name: 'Shout', tool_id: 'formula', config: { expression: '$uppercase(Name)' } });
    await p.addTool({ name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Name}}' }, run_condition: '`Country` = "France"' });
    const name = await p.col('Name');
    const byName = await p.patch(name.col_id, { name: 'Company' });
    expect(byName.status).toBe(409);
    expect(byName.body.detail.message).toContain('"Shout" reads "Name"');
    expect(byName.body.detail.message).toContain('edit it first');
    expect(byName.body.detail.read_by).toEqual(['Shout']);
    const byCountry = await p.patch((await p.col('Country')).col_id, { name: 'Land' });
    expect(byCountry.status).toBe(409);
    expect(byCountry.body.detail.read_by).toEqual(['Domain']);
    expect((await p.columns()).map((c) => c.name)).toEqual(['Name', 'Country', 'Shout', 'Domain']);
    expect((await p.col('Domain')).config).toEqual({ value: '{{Name}}' });
    // Once the expression no longer reads it, the rename goes through.
    expect((await p.patch((await p.col('Shout')).col_id, { config: { expression: '$uppercase({{Name}})' } })).status).toBe(200);
    expect((await p.patch(name.col_id, { name: 'Company' })).status).toBe(200);
    expect((await p.col('Shout')).config).toEqual({ expression: '$uppercase({{Company}})' });
    expect((await p.col('Domain')).config).toEqual({ value: '{{Company}}' });
  });

  test('tool settings: config checked as create_column checks it, run_condition and auto_run', async () => {
    const p = await project('Name,Phone\nAcme,020 7946 0958\n');
    const col = await p.addTool({ name: 'E164', tool_id: 'phone_normalizer', config: { phone: '{{Phone}}' } });
    for (const [config, path] of [
      [{ phone: '{{Phone}}', bogus: 1 }, 'config.bogus'],
      [{ phone: '{{Nope}}' }, 'config'],
      [{ phone: '{{E164}}' }, 'config'],
    ] as const) {
      const r = await p.patch(col.col_id, { config });
      expect(r.status).toBe(422);
      expect(r.body.detail.errors.map((e: any) => e.path)).toContain(path);
    }
    expect((await p.patch(col.col_id, { run_condition: 'Name = ' })).status).toBe(422);
    expect(await p.col('E164')).toEqual(col);

    const r = await p.patch(col.col_id, {
      config: { phone: '{{Phone}}', default_country: 'GB' },
      auto_run: true,
      run_condition: 'Name != "x"',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ...col,
      config: { phone: '{{Phone}}', default_country: 'GB' },
      auto_run: true,
      run_condition: 'Name != "x"',
      primary_field: 'phone_e164',
    });
    expect(await p.col('E164')).toEqual(r.body);
    // auto_run: a row added now is enriched with the new config.
    await t.api('POST', `/projects/${p.id}/rows`, { body: { company: { Name: 'Globex', Phone: '020 7946 0000' } } });
    const rows = await p.settled();
    expect(rows[1].company.E164).toMatchObject({ status: 'completed', value: '+442079460000' });
    expect((await p.patch(col.col_id, { run_condition: null })).body.run_condition).toBeNull();
  });

  test('two columns may not wait for each other', async () => {
    const p = await project('Name\nAcme\n');
    const a = await p.addTool({ name: 'A', tool_id: 'formula', config: { expression: '"a"' } });
    await p.addTool({ name: 'B', tool_id: 'formula', config: { expression: '{{A}} & "b"' } });
    const r = await p.patch(a.col_id, { config: { expression: '{{B}}' } });
    expect(r.status).toBe(422);
    expect(r.body.detail.message).toContain('wait for each other');
    expect((await p.col('A')).config).toEqual({ expression: '"a"' });
  });

  test('bad requests: tool settings on an input column, nothing to change, unknown fields — 422, nothing changes', async () => {
    const p = await project('Name\nAcme\n');
    const name = await p.col('Name');
    const input = await p.patch(name.col_id, { name: 'Company', config: { x: 1 }, auto_run: true });
    expect(input.status).toBe(422);
    expect(input.body.detail.message).toBe(
      '"Name" is an input column: input columns have no tool settings (config, auto_run); only their name can change',
    );
    expect((await p.patch(name.col_id, {})).status).toBe(422);
    expect((await p.patch(name.col_id, { name: 'Company', type: 'tool' })).status).toBe(422);
    expect((await p.patch(name.col_id, { name: '' })).status).toBe(422);
    expect((await p.patch(name.col_id, { name: '__proto__' })).status).toBe(422);
    expect((await p.columns()).map((c) => c.name)).toEqual(['Name']);
  });

  test('an unknown column, or another workspace’s project, is 404 and nothing changes', async () => {
    const p = await project('Name\nAcme\n');
    const name = await p.col('Name');
    expect((await p.patch('00000000-0000-7000-8000-000000000000', { name: 'X' })).status).toBe(404);
    const stranger = await t.newWorkspace();
    const theirs = await p.patch(name.col_id, { name: 'Stolen' }, { 'service-api-key': stranger.key });
    expect(theirs.status).toBe(404);
    expect((await p.columns()).map((c) => c.name)).toEqual(['Name']);
  });
});
