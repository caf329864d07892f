import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { call, type McpTestService, startMcpTestService } from './mcp/mcp-support.ts';
import { addColumn, cellOf, csvProject, SERVICE_START_MS, setEnv, settledRows } from './plugins/enrich-helpers.ts';
import { DIALECTS } from './support/databases.ts';
import { waitForBuilder } from './support/test-service.ts';

const CELL = 262_144;
const big = (bytes: number) => 'x'.repeat(bytes);

describe.each(DIALECTS)('size limits on %s', (dialect) => {
  let t: McpTestService;
  let pid: string;
  const rowCount = async (id = pid) => (await t.api('GET', `/projects/${id}`)).body.row_count;
  beforeAll(async () => {
    // A small page bound, so that a few large rows reach it.
    t = await startMcpTestService(dialect, { MAX_PAGE_BYTES: String(1_048_576), PROVIDER_MODE: 'live' });
    pid = await csvProject(t, 'Name,Notes,Extra\nAcme,short,');
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('POST rows: a value over MAX_CELL_BYTES is 403 naming the column, and nothing is stored', async () => {
    const r = await t.api('POST', `/projects/${pid}/rows`, { body: { company: { Name: 'Big', Notes: big(CELL + 1), Extra: null } } });
    expect(r.status).toBe(403);
    expect(r.body.detail.column).toBe('Notes');
    expect(r.body.detail.message).toContain('Column "Notes" holds 262,147 bytes, over the 262,144-byte limit of a cell (MAX_CELL_BYTES)');
    expect(await rowCount()).toBe(1);
    // Just under the limit is fine (the JSON of the string counts its quotes).
    const ok = await t.api('POST', `/projects/${pid}/rows`, { body: { company: { Name: 'Fits', Notes: big(CELL - 2), Extra: null } } });
    expect(ok.status).toBe(201);
  });

  test('a row whose cells together pass MAX_ROW_BYTES is refused; a number JSON cannot carry is refused, never stored as null', async () => {
    const wide = await csvProject(t, 'A,B,C,D,E\n1,2,3,4,5');
    const heavy = big(CELL - 10);
    const full = { A: heavy, B: heavy, C: heavy, D: heavy, E: null }; // 4 cells that each fit: 1,048,544 bytes, a row that fits
    const r = await t.api('POST', `/projects/${wide}/rows/batch`, { body: { rows: [full, { ...full, E: big(40) }] } });
    expect(r.status).toBe(403);
    expect(r.body.detail).toMatchObject({ row_index: 1, column: null });
    expect(r.body.detail.message).toBe('rows[1]: The row holds 1,048,586 bytes, over the 1,048,576-byte limit of a row (MAX_ROW_BYTES)');
    expect(await rowCount(wide)).toBe(1);
    expect((await t.api('POST', `/projects/${wide}/rows`, { body: { company: full } })).status).toBe(201);
    const before = await rowCount();
    const inf = await t.api('POST', `/projects/${pid}/rows`, {
      rawBody: '{"company":{"Name":"Inf","Notes":1e309,"Extra":null}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(inf.status).toBe(403);
    expect(inf.body.detail.message).toBe(
      'The body holds 1e309 under "Notes", a number JSON cannot carry exactly (it would be stored as null); send it as a string',
    );
    // Nor one that would lose digits.
    const long = await t.api('POST', `/projects/${pid}/rows`, {
      rawBody: '{"company":{"Name":"Long","Notes":12345678901234567890,"Extra":null}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(long.status).toBe(403);
    expect(long.body.detail.message).toBe(
      'The body holds 12345678901234567890 under "Notes", a number JSON cannot carry exactly (it would be stored as 12345678901234567000); send it as a string',
    );
    expect(await rowCount()).toBe(before);
  });

  test('MCP add_row and add_rows refuse an oversized value the same way', async () => {
    const client = await t.client();
    const one = await call(client, 'add_row', {
      project_id: pid,
      company_json: JSON.stringify({ Name: 'Big', Notes: big(CELL), Extra: null }),
    });
    expect(one).toMatchObject({ ok: false, status_code: 403, detail: { column: 'Notes' } });
    const many = await call(client, 'add_rows', {
      project_id: pid,
      rows_json: JSON.stringify([
        { Name: 'a', Notes: null, Extra: null },
        { Name: 'b', Notes: null, Extra: big(CELL) },
      ]),
    });
    expect(many).toMatchObject({ ok: false, status_code: 403, detail: { row_index: 1, column: 'Extra' } });
    const inexact = await call(client, 'add_row', {
      project_id: pid,
      company_json: '{"Name":"N","Notes":12345678901234567890,"Extra":null}',
    });
    expect(inexact).toMatchObject({ ok: false, status_code: 403 });
    expect(inexact.detail.message).toBe(
      'company_json holds 12345678901234567890 under "Notes", a number JSON cannot carry exactly (it would be stored as 12345678901234567000); send it as a string',
    );
    expect(await rowCount()).toBe(2);
  });

  test('a builder row over the limit fails the run visibly, naming the column', async () => {
    const csv = `Name,Notes\nSmall,ok\nHuge,${big(CELL + 10)}\n`;
    const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    expect(r.status).toBe(201);
    const details = await waitForBuilder(t, r.body.project_id);
    expect(details.builder_status.type).toBe('failed');
    expect(details.builder_status.error_message).toContain('Column "Notes" holds');
    expect(details.builder_status.error_message).toContain('MAX_CELL_BYTES');
    // The refused page is neither written nor counted, nor logged as written.
    expect(details.row_count).toBe(0);
    expect(details.lead_gen_execution_log.some((e: any) => e.step === 'page')).toBe(false);
  });

  test('a tool result over the limit becomes that cell’s error', async () => {
    const project = await csvProject(t, 'Name\nAcme');
    // An API that answers 300 kB of JSON (the service runs live, with loopback allowed, for it).
    const api = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json({ blob: big(300_000) }) });
    const restore = setEnv({ ALLOW_PRIVATE_NETWORK: '1' });
    const echo = await addColumn(t, project, 'Echo', 'http_api', { url: `http://127.0.0.1:${api.port}/big` });
    const formula = await addColumn(t, project, 'Padded', 'formula', { expression: '$pad("", 300000)' });
    expect((await t.api('POST', `/projects/${project}/columns/run`, { body: { col_ids: [echo, formula] } })).status).toBe(200);
    const rows = await settledRows(t, project);
    api.stop(true);
    restore();
    expect(cellOf(rows, 'Name', 'Acme', 'Echo')).toMatchObject({
      status: 'error',
      value: null,
      error: expect.stringMatching(/^the result holds 300,\d{3} bytes, over the 262,144-byte limit of a cell/),
    });
    expect(cellOf(rows, 'Name', 'Acme', 'Padded')).toMatchObject({
      status: 'error',
      value: null,
      error: expect.stringContaining('over the 262144-byte limit of a cell'),
    });
  });

  test('a column config over 64 kB is 422 (settings, not data), on both databases alike', async () => {
    const r = await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Huge', tool_id: 'http_api', config: { url: 'https://api.example.com', body: big(70_000) } },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail.errors).toEqual([
      { path: 'config', message: expect.stringMatching(/^is 70,\d{3} bytes; a column's config holds at most 65,536$/) },
    ]);
    // Under the bound, a large config is stored alike on SQLite and MariaDB (no 64 kB TEXT cap).
    const ok = await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Large', tool_id: 'http_api', config: { url: 'https://api.example.com', body: big(65_000) } },
    });
    expect(ok.status).toBe(201);
    expect((await t.api('GET', `/projects/${pid}/columns`)).body.find((c: any) => c.name === 'Large').config.body).toHaveLength(65_000);
  });

  test('a page that would pass MAX_PAGE_BYTES is refused with the page_size that fits', async () => {
    const project = await csvProject(t, 'Name,Notes\nA,');
    const rows = Array.from({ length: 8 }, (_, i) => ({ Name: `R${i}`, Notes: big(200_000) }));
    expect((await t.api('POST', `/projects/${project}/rows/batch`, { body: { rows } })).status).toBe(201);
    const all = await t.api('GET', `/projects/${project}/rows?page_size=9`);
    expect(all.status).toBe(422);
    // The first row (A) is small: it and five of the 200 kB rows fit in 1 MB.
    expect(all.body.detail.message).toContain('Ask for page_size=6 or less');
    expect(all.body.detail.errors).toEqual([{ path: 'page_size', message: 'at most 6 rows of this page fit in 1 MB' }]);
    const fits = await t.api('GET', `/projects/${project}/rows?page_size=6`);
    expect(fits.status).toBe(200);
    expect(fits.body.rows).toHaveLength(6);
    expect(fits.body.total_rows).toBe(9);
  });
});
