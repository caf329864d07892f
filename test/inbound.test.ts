import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { captureLog } from './support/capture-log.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/** Inbound URLs (docs/enrichment.md): other systems post rows with no API key; the URL is the secret. */
describe.each(DIALECTS)('inbound URLs on %s', (dialect) => {
  let t: TestService;
  let pid: string;
  let url: string;

  const rows = async (id = pid) => (await t.api('GET', `/projects/${id}/rows?page_size=100`)).body.rows as any[];
  const names = async (id = pid) => (await rows(id)).map((r) => r.company.Name.value);
  const post = (body: unknown, to = url) =>
    fetch(to, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  beforeAll(async () => {
    t = await startTestService(dialect, {
      PLANS_JSON: JSON.stringify({ tiny: { apiAccess: true, requestsPerMinute: 3, maxRowsPerProject: 100 } }),
    });
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name,Website\nAcme,acme.com' }, name: 'Inbound' },
    });
    pid = made.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    const inbound = await t.api('POST', `/projects/${pid}/inbound`);
    expect(inbound.status).toBe(201);
    url = inbound.body.url;
  });
  afterAll(() => t.stop());

  test('a company map, {"company": …} or an array adds rows with no key; left-out input columns stay empty', async () => {
    expect(url).toStartWith(`${t.url}/inbound/in_`);
    const one = await post({ Name: 'Globex', Website: 'globex.com' });
    expect(one.status).toBe(201);
    const answer = await one.json();
    expect(answer).toMatchObject({ project_id: pid, created: 1, existing: 0 });
    expect(answer.row_ids).toHaveLength(1);
    expect((await post({ company: { Name: 'Initech' } })).status).toBe(201);
    const many = await post([{ Name: 'Umbrella', Website: 'umbrella.com' }, { Name: 'Hooli' }]);
    expect((await many.json()).created).toBe(2);
    expect(await names()).toEqual(['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli']);
    const initech = (await rows()).find((r) => r.company.Name.value === 'Initech');
    expect(initech.company.Website.value).toBeNull();
  });

  test('unique keys apply: ACME.com again is the existing row, not a new one', async () => {
    expect((await t.api('PUT', `/projects/${pid}/settings`, { body: { unique_columns: ['Website'] } })).status).toBe(200);
    const before = await names();
    const r = await post([
      { Name: 'Acme again', Website: 'https://www.ACME.com/' },
      { Name: 'Stark', Website: 'stark.com' },
    ]);
    expect(r.status).toBe(201);
    expect(await r.json()).toMatchObject({ created: 1, existing: 1 });
    expect(await names()).toEqual([...before, 'Stark']);
  });

  test('bad input is a 422 with a detail and writes nothing: unknown or tool columns, not JSON, not a map', async () => {
    await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    const before = await names();
    const cases: [unknown, string][] = [
      [{ Name: 'X', Fax: '123' }, 'no column is named "Fax"'],
      [[{ Name: 'Y' }, { Name: 'Z', Fax: 1 }], '[1]: '],
      [{ Name: 'X', Upper: 'Y' }, 'tool column'],
      ['{not json', 'not valid JSON'],
      ['"just a string"', 'mapping column names to values'],
      [[], 'empty'],
      [[1, 2], '[0] is not an object'],
    ];
    for (const [body, words] of cases) {
      const r = await post(body);
      expect(r.status).toBe(422);
      const { detail } = await r.json();
      expect(typeof detail === 'string' ? detail : detail.message).toContain(words);
    }
    expect(await names()).toEqual(before);
  });

  test('the access log names the route, never the URL (its last segment is the secret)', async () => {
    const secret = url.split('/').pop() as string;
    const { text, lines } = await captureLog(async () => {
      expect((await post({ Name: 'Logged' })).status).toBe(201);
    });
    const line = lines.find((l) => l.msg === 'request' && l.method === 'POST');
    expect(line?.route).toBe('/api/enterprise/inbound/{token}');
    expect(text).not.toContain(secret);
  });

  test('a new URL replaces the old one; DELETE turns it off; unknown URLs and other workspaces are 404s', async () => {
    const again = await t.api('POST', `/projects/${pid}/inbound`);
    expect(again.body.url).not.toBe(url);
    expect((await post({ Name: 'Old URL' })).status).toBe(404);
    expect((await post({ Name: 'New URL' }, again.body.url)).status).toBe(201);
    url = again.body.url;
    expect((await post({ Name: 'x' }, `${t.url}/inbound/in_${'A'.repeat(32)}`)).status).toBe(404);
    const other = await t.newWorkspace();
    const as = { headers: { 'service-api-key': other.key } };
    expect((await t.api('POST', `/projects/${pid}/inbound`, as)).status).toBe(404);
    expect((await t.api('DELETE', `/projects/${pid}/inbound`, as)).status).toBe(404);
    expect((await post({ Name: 'Still on' })).status).toBe(201); // the other workspace changed nothing
    expect((await t.api('DELETE', `/projects/${pid}/inbound`)).body).toEqual({ deleted: true });
    const off = await post({ Name: 'Off' });
    expect(off.status).toBe(404);
    expect((await off.json()).detail).toContain('inbound');
    expect(await names()).not.toContain('Off');
  });

  test('rate-limited per URL by the workspace’s plan: 429 with Retry-After', async () => {
    const tiny = await t.newWorkspace('tiny');
    const as = { headers: { 'service-api-key': tiny.key } };
    const made = await t.api('POST', '/projects', { ...as, body: { builder_id: 'manual_list_builder', form_data: { companies: 'A' } } });
    const inbound = await t.api('POST', `/projects/${made.body.project_id}/inbound`, as);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await post({ Name: `R${i}` }, inbound.body.url);
      statuses.push(r.status);
      if (r.status === 429) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 3)).toEqual([201, 201, 201]);
    expect(statuses.slice(3)).toEqual([429, 429]);
  });
});
