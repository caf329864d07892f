import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { UniqueKeyTaken } from '../core/ports/storage.ts';
import { DIALECTS } from './support/databases.ts';
import { openSse } from './support/sse.ts';
import { enc, startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

/** PATCH /projects/{id}/rows/{row_id} (update_row): new values of a row's input cells. */
describe.each(DIALECTS)('changing a row on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  });
  afterAll(() => t.stop());

  async function project(csv = 'Name,Website,Employees\nAcme,acme.com,120\nGlobex,globex.com,40\nInitech,initech.com,60\n') {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    const id = made.body.project_id as string;
    await waitForBuilder(t, id);
    const columns = (await t.api('GET', `/projects/${id}/columns`)).body as any[];
    const colId = (name: string) => columns.find((c) => c.name === name).col_id as string;
    const list = async (query = '') => (await t.api('GET', `/projects/${id}/rows?page_size=100${query}`)).body;
    const rows = (await list()).rows as any[];
    const rowId = (name: string) => rows.find((r) => r.company.Name.value === name).id as string;
    const patch = (row: string, cells: unknown, headers: Record<string, string> = {}) =>
      t.api('PATCH', `/projects/${id}/rows/${row}`, { body: { cells }, headers });
    const get = async (row: string) => (await t.api('GET', `/projects/${id}/rows/${row}`)).body;
    const where = (name: string, operator: string, value?: unknown) =>
      `&filter_groups=${enc([{ type: 'and', rules: [{ col_id: colId(name), operator, value }] }])}`;
    return { id, colId, list, rowId, patch, get, where };
  }

  test('an edited cell is answered, read back, and found by filters and sorts on its new value', async () => {
    const p = await project();
    const globex = p.rowId('Globex');
    // Count a filter first: its shared total must follow the edit.
    expect((await p.list(p.where('Website', 'contains', 'example'))).total_rows).toBe(0);
    const r = await p.patch(globex, { Website: 'globex.example', Employees: 4000 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(await p.get(globex));
    expect(r.body.company).toEqual({
      Name: { name: 'Name', value: 'Globex', status: 'default', is_loading: false },
      Website: { name: 'Website', value: 'globex.example', status: 'default', is_loading: false },
      Employees: { name: 'Employees', value: 4000, status: 'default', is_loading: false },
    });
    const found = await p.list(p.where('Website', 'contains', 'example'));
    expect([found.total_rows, found.rows.map((row: any) => row.id)]).toEqual([1, [globex]]);
    expect((await p.list(p.where('Website', 'eq', 'globex.com'))).total_rows).toBe(0);
    expect((await p.list(p.where('Employees', 'gt', 1000))).rows.map((row: any) => row.id)).toEqual([globex]);
    const sorted = await p.list(`&sort_rules=${enc([{ col_id: p.colId('Employees'), direction: 'desc', sort_as_number: true }])}`);
    expect(sorted.rows.map((row: any) => row.company.Name.value)).toEqual(['Globex', 'Acme', 'Initech']);
  });

  test('cells named by col_id; null empties a cell; the project’s change counter moves', async () => {
    const p = await project();
    const acme = p.rowId('Acme');
    const stored = await t.service.kernel.storage.projects.get(t.workspaceId, p.id);
    const before = await t.service.kernel.storage.rows.version(stored?.pk as number);
    const r = await p.patch(acme, { [p.colId('Website')]: null });
    expect(r.status).toBe(200);
    expect(r.body.company.Website.value).toBeNull();
    expect(await t.service.kernel.storage.rows.version(stored?.pk as number)).toBeGreaterThan(before);
    expect((await p.list(p.where('Website', 'is_empty'))).rows.map((row: any) => row.id)).toEqual([acme]);
  });

  test('tool cells, unknown columns and empty edits are 422 in plain words, and nothing is written', async () => {
    const p = await project();
    await t.api('POST', `/projects/${p.id}/columns`, {
      body: { name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } },
    });
    const acme = p.rowId('Acme');
    const before = await p.get(acme);
    const tool = await p.patch(acme, { Name: 'Acme Corp', Domain: 'x.com' });
    expect(tool.status).toBe(422);
    expect(tool.body.detail.message).toBe(
      '"Domain" is a tool column: tool cells are filled by their tool, not written. Re-run it instead (run_pending_columns with mode "all" and row_ids).',
    );
    const unknown = await p.patch(acme, { Name: 'Acme Corp', Bogus: 1 });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail.message).toContain('"Bogus"');
    expect((await p.patch(acme, {})).status).toBe(422);
    expect((await t.api('PATCH', `/projects/${p.id}/rows/${acme}`, { body: { cells: { Name: 'x' }, extra: 1 } })).status).toBe(422);
    expect((await p.patch(acme, { Name: 'x'.repeat(300_000) })).status).toBe(422);
    expect(await p.get(acme)).toEqual(before);
  });

  test('a missing, deleted or malformed row, and another workspace’s project, are 404', async () => {
    const p = await project();
    const initech = p.rowId('Initech');
    expect((await p.patch('999999', { Name: 'x' })).status).toBe(404);
    expect((await p.patch('abc', { Name: 'x' })).status).toBe(404);
    const stranger = await t.newWorkspace();
    expect((await p.patch(initech, { Name: 'Stolen' }, { 'service-api-key': stranger.key })).status).toBe(404);
    expect((await p.get(initech)).company.Name.value).toBe('Initech');
    await t.api('DELETE', `/projects/${p.id}/rows`, { body: { row_ids: [initech] } });
    expect((await p.patch(initech, { Name: 'x' })).status).toBe(404);
  });

  test('a value taking another row’s unique key is a 409 naming it; the row’s key follows its new value', async () => {
    const p = await project();
    expect((await t.api('PUT', `/projects/${p.id}/settings`, { body: { unique_columns: ['Website'] } })).status).toBe(200);
    const [acme, globex] = [p.rowId('Acme'), p.rowId('Globex')];
    const taken = await p.patch(globex, { Name: 'Globex 2', Website: 'https://www.ACME.com/' });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toMatchObject({ unique_columns: ['Website'], row_id: acme });
    expect(taken.body.detail.message).toBe(
      `Row ${acme} already holds this unique key (Website: "https://www.ACME.com/"): nothing was written. Change the value, or delete that row first.`,
    );
    expect((await p.get(globex)).company.Name.value).toBe('Globex');
    // A write that meets the key in storage (another edit took it meanwhile) fails whole too.
    const { storage } = t.service.kernel;
    const pk = (await storage.projects.get(t.workspaceId, p.id))?.pk as number;
    const website = (await storage.projects.columns(pk)).find((c) => c.name === 'Website')?.no as number;
    const name = (await storage.projects.columns(pk)).find((c) => c.name === 'Name')?.no as number;
    const write = { [website]: { v: 'acme.com' }, [name]: { v: 'Globex 3' } };
    await expect(storage.rows.updateCells(pk, Number(globex), write, [website])).rejects.toBeInstanceOf(UniqueKeyTaken);
    expect((await p.get(globex)).company).toMatchObject({ Name: { value: 'Globex' }, Website: { value: 'globex.com' } });
    // A key of its own: the old one is free again, the new one answers this row.
    expect((await p.patch(globex, { Website: 'globex.example' })).status).toBe(200);
    const add = (website: string) =>
      t.api('POST', `/projects/${p.id}/rows`, { body: { company: { Name: 'New', Website: website, Employees: null } } });
    expect((await add('globex.example')).body.row_id).toBe(globex);
    expect((await add('globex.com')).status).toBe(201);
    // Editing another column of the row, or giving it its own key again, is no clash.
    expect((await p.patch(globex, { Employees: 1, Website: 'GLOBEX.example' })).status).toBe(200);
  });

  test('open grids get a cells event; tool cells that read the value stay until re-run', async () => {
    const p = await project();
    const dom = await t.api('POST', `/projects/${p.id}/columns`, {
      body: { name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } },
    });
    const acme = p.rowId('Acme');
    const filled = async (value: string) => {
      for (let i = 0; i < 400 && (await p.get(acme)).company.Domain.value !== value; i++) await Bun.sleep(25);
      return (await p.get(acme)).company.Domain;
    };
    await t.api('POST', `/projects/${p.id}/columns/run`, { body: { col_ids: [dom.body.col_id] } });
    expect(await filled('acme.com')).toMatchObject({ status: 'completed', value: 'acme.com' });
    const s = await openSse(`${t.url}/projects/${p.id}/events`, { 'service-api-key': t.key });
    try {
      expect((await p.patch(acme, { Website: 'https://acme.example.org/x' })).status).toBe(200);
      const e = await s.waitFor((ev) => ev.event === 'cells' && ev.data.col_id === p.colId('Website'));
      expect(e.data).toEqual({
        col_id: p.colId('Website'),
        cells: [{ row_id: acme, status: 'default', value: 'https://acme.example.org/x', error: null }],
      });
    } finally {
      s.close();
    }
    expect((await p.get(acme)).company.Domain).toMatchObject({ status: 'completed', value: 'acme.com' });
    const rerun = await t.api('POST', `/projects/${p.id}/columns/run`, {
      body: { col_ids: [dom.body.col_id], mode: 'all', row_ids: [acme] },
    });
    expect(rerun.body.queued).toBe(1);
    expect(await filled('acme.example.org')).toMatchObject({ status: 'completed', value: 'acme.example.org' });
  });
});
