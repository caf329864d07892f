import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type DnsServer, startDnsServer } from '../support/dns-server.ts';
import { type FakeServer, startFakeServer } from '../support/fake-providers.ts';
import { runTool } from 'workflow-service/plugin-testing';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, runColumns, setEnv, SERVICE_START_MS } from './enrich-helpers.ts';

/** Every tool column of the catalog, as a new user would add them in sandbox mode. */
const COLUMNS: [string, string, Record<string, unknown>][] = [
  ['Site', 'website_info', { url: '{{Website}}' }],
  ['Stack', 'tech_stack', { url: '{{Website}}' }],
  ['Guess', 'email_finder', { first_name: '{{First}}', last_name: '{{Last}}', domain: '{{Website}}' }],
  ['Check', 'email_validator', { email: '{{Email}}' }],
  ['Pitch', 'ai_prompt', { model: 'gpt-4o-mini', prompt: 'What does {{Name}} sell?' }],
  [
    'Segment',
    'ai_prompt',
    {
      model: 'gpt-4o-mini',
      prompt: 'Classify {{Name}}',
      json_schema: {
        type: 'object',
        properties: { b2b: { type: 'boolean' }, segment: { type: 'string', enum: ['smb', 'enterprise'] }, size: { type: 'integer' } },
      },
    },
  ],
  ['Person', 'person_enrich', { first_name: '{{First}}', last_name: '{{Last}}', domain: '{{Website}}' }],
  ['Company', 'company_enrich', { domain: '{{Website}}' }],
  [
    'Api',
    'http_api',
    {
      method: 'POST',
      url: 'https://api.acme.co.uk/v1/lookup',
      query: { q: '{{Name}}' },
      headers: { Authorization: 'Bearer real-secret' },
      body: { name: '{{Name}}' },
      extract: 'request',
    },
  ],
];

describe('sandbox twins: deterministic, clearly fake, no network', () => {
  let t: TestService;
  let recorder: FakeServer;
  let dns: DnsServer;
  let restoreEnv: () => void;
  beforeAll(async () => {
    recorder = startFakeServer({});
    dns = await startDnsServer({});
    // Every door a live run would use points at a recorder, and no key is set.
    restoreEnv = setEnv({
      APOLLO_BASE_URL: recorder.url,
      OPENAI_BASE_URL: recorder.url,
      DNS_SERVER: dns.address,
      APOLLO_API_KEY: undefined,
      OPENAI_API_KEY: undefined,
      ALLOW_PRIVATE_NETWORK: '1',
    });
    t = await startTestService('sqlite', { PROVIDER_MODE: 'sandbox' });
  }, SERVICE_START_MS);
  afterAll(async () => {
    await t.stop();
    restoreEnv();
    recorder.stop();
    await dns.stop();
  });

  async function enrichedProject(): Promise<any[]> {
    const pid = await csvProject(t, 'Name,Website,First,Last,Email\nAcme,https://www.acme.co.uk/about,Ada,Lovelace,ada@acme.co.uk\n');
    const ids = [];
    for (const [name, tool, config] of COLUMNS) ids.push(await addColumn(t, pid, name, tool, config));
    return runColumns(t, pid, ids);
  }

  test('every tool answers fake data under example.com without a key, a request or a DNS question', async () => {
    const rows = await enrichedProject();
    const cell = (col: string) => cellOf(rows, 'Name', 'Acme', col);
    for (const [name] of COLUMNS) expect([name, cell(name).status]).toEqual([name, 'completed']);
    expect(cell('Site').value).toMatchObject({
      url: 'https://acme.example.com/',
      emails: ['hello@acme.example.com'],
      socials: { linkedin: 'https://linkedin.example.com/company/acme' },
    });
    expect(cell('Stack').value.url).toBe('https://acme.example.com/');
    expect(cell('Stack').value.technologies.length).toBeGreaterThanOrEqual(3);
    expect(cell('Guess').value).toMatchObject({ email: 'ada.lovelace@acme.co.uk', mx: ['mx.sandbox.example.com'] });
    expect(cell('Check').value).toMatchObject({ verdict: 'valid', mx: ['mx.sandbox.example.com'] });
    expect(cell('Pitch').value).toBe('[sandbox answer] What does Acme sell?');
    expect(cell('Segment').value).toEqual({
      b2b: expect.any(Boolean),
      segment: expect.stringMatching(/^(smb|enterprise)$/),
      size: expect.any(Number),
    });
    expect(cell('Person').value).toMatchObject({
      name: 'Ada Lovelace',
      email: 'ada.lovelace@acme.example.com',
      company_domain: 'acme.example.com',
    });
    expect(cell('Company').value).toMatchObject({
      name: 'Acme (sandbox)',
      domain: 'acme.example.com',
      website: 'https://acme.example.com',
    });
    // http_api sends nothing; its "response" echoes the request, header values (keys) left out.
    expect(cell('Api').value).toEqual({
      method: 'POST',
      url: 'https://api.acme.co.uk/v1/lookup?q=Acme',
      headers: ['Authorization'],
      body: { name: 'Acme' },
    });
    expect(recorder.requests.length).toBe(0);
    expect(dns.queries.length).toBe(0);
  });

  test('"dentists in Lyon" reads like the query: varied dentists in Lyon, each with its own site, domain and home page', async () => {
    const created = await t.api('POST', '/projects', {
      body: { builder_id: 'google_maps_search', form_data: { query: 'dentists in Lyon', max_results: 12 } },
    });
    expect(created.status).toBe(201);
    const pid = created.body.project_id;
    for (let i = 0; i < 200 && (await t.api('GET', `/projects/${pid}`)).body.builder_status.type !== 'completed'; i++) await Bun.sleep(25);
    const ids = [
      await addColumn(t, pid, 'Domain', 'domain_normalizer', { value: '{{Website}}' }),
      await addColumn(t, pid, 'Site', 'website_info', { url: '{{Website}}' }),
    ];
    const rows = await runColumns(t, pid, ids);
    expect(rows.length).toBe(12);
    const values = (col: string) => rows.map((r) => r.company[col].value);
    for (const name of values('Name')) expect(name).toMatch(/Dentist/);
    for (const address of values('Address')) expect(address).toMatch(/^\d+ .+, Lyon$/);
    expect(new Set(values('Category'))).toEqual(new Set(['Dentist']));
    expect(new Set(values('Name')).size).toBeGreaterThanOrEqual(10);
    // Clearly fake, and one company per row all the way through the tools.
    for (const site of values('Website')) expect(site).toMatch(/^https:\/\/www\.[a-z0-9-]+\.example\.com$/);
    const domains = values('Domain');
    expect(new Set(domains).size).toBe(12);
    for (const d of domains) expect(d).toMatch(/^[a-z0-9-]+\.example\.com$/);
    expect(new Set(values('Site').map((v: any) => v.title)).size).toBe(12);
    expect(rows.map((r) => r.company.Site.value.url)).toEqual(domains.map((d: string) => `https://${d}/`));
  });

  test('the same input gives the same answers', async () => {
    // Called directly: through the service a second run could be answered from the result cache.
    const row = { Name: 'Globex', Website: 'globex.test', First: 'Grace', Last: 'Hopper', Email: 'grace@globex.test' };
    for (const [name, toolId, config] of COLUMNS) {
      const tool = t.service.kernel.plugins.tool(toolId);
      if (!tool) throw new Error(`no tool ${toolId}`);
      const first = await runTool(tool, [row], config, { providerMode: 'sandbox' });
      expect([name, first[0]?.status]).toEqual([name, 'ok']);
      expect(await runTool(tool, [row], config, { providerMode: 'sandbox' })).toEqual(first);
    }
  });
});
