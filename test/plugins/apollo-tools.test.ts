import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import companyEnrich from '../../plugins/tools/company_enrich/index.ts';
import personEnrich from '../../plugins/tools/person_enrich/index.ts';
import { DIALECTS } from '../support/databases.ts';
import { APOLLO_KEY, type FakeServer, fakeApollo } from '../support/fake-providers.ts';
import { runTool } from 'workflow-service/plugin-testing';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, runColumns, setEnv, SERVICE_START_MS } from './enrich-helpers.ts';

const ADA = {
  id: 'p-1',
  first_name: 'Ada',
  last_name: 'Lovelace',
  name: 'Ada Lovelace',
  title: 'Head of Engines',
  email: 'ada@acme.test',
  email_status: 'verified',
  linkedin_url: 'https://www.linkedin.com/in/ada',
  seniority: 'head',
  departments: ['engineering'],
  city: 'London',
  country: 'United Kingdom',
  organization: { name: 'Acme', primary_domain: 'acme.test' },
};
const ORG = (name: string, domain: string) => ({
  id: `o-${domain}`,
  name,
  primary_domain: domain,
  website_url: `https://www.${domain}`,
  industry: 'machinery',
  estimated_num_employees: 120,
  annual_revenue: 25_000_000,
  founded_year: 1949,
  city: 'Phoenix',
  country: 'United States',
  short_description: `${name} makes things.`,
  keywords: ['rockets'],
  technology_names: ['Nginx'],
});

let apollo: FakeServer;
let restoreEnv: () => void;
beforeAll(() => {
  apollo = fakeApollo({
    people: [ADA],
    organizations: Object.fromEntries(
      ['acme', 'globex', 'initech', 'umbrella', 'hooli'].map((n) => [`${n}.test`, ORG(n[0]?.toUpperCase() + n.slice(1), `${n}.test`)]),
    ),
  });
  restoreEnv = setEnv({ APOLLO_BASE_URL: apollo.url, APOLLO_API_KEY: APOLLO_KEY, ALLOW_PRIVATE_NETWORK: '1' });
});
afterAll(() => {
  restoreEnv();
  apollo.stop();
});

describe.each(DIALECTS)('person_enrich and company_enrich on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live', JOB_MAX_ATTEMPTS: '2' });
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('person_enrich matches people through POST /api/v1/people/match with the key in X-Api-Key', async () => {
    const pid = await csvProject(
      t,
      'First,Last,Domain,Email\nAda,Lovelace,acme.test,\nNobody,Here,acme.test,\nLinus,,,\n,,,ada@acme.test\n',
    );
    const col = await addColumn(t, pid, 'Person', 'person_enrich', {
      first_name: '{{First}}',
      last_name: '{{Last}}',
      domain: '{{Domain}}',
      email: '{{Email}}',
    });
    const before = apollo.requestsTo('/api/v1/people/match').length;
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'First', 'Ada', 'Person')).toMatchObject({
      status: 'completed',
      value: {
        name: 'Ada Lovelace',
        title: 'Head of Engines',
        email: 'ada@acme.test',
        email_status: 'verified',
        linkedin_url: 'https://www.linkedin.com/in/ada',
        seniority: 'head',
        location: 'London, United Kingdom',
        company: 'Acme',
        company_domain: 'acme.test',
        apollo_id: 'p-1',
      },
    });
    expect(cellOf(rows, 'Email', 'ada@acme.test', 'Person').value.name).toBe('Ada Lovelace');
    expect(cellOf(rows, 'First', 'Nobody', 'Person')).toMatchObject({ status: 'no_result', error: 'no matching person' });
    // Not enough to single a person out: no request, no charge.
    expect(cellOf(rows, 'First', 'Linus', 'Person')).toMatchObject({
      status: 'no_result',
      error: expect.stringContaining('give an email'),
    });
    const sent = apollo.requestsTo('/api/v1/people/match').slice(before);
    expect(sent.length).toBe(3);
    expect(sent.every((r) => r.headers.get('x-api-key') === APOLLO_KEY && r.query.size === 0)).toBe(true);
    expect(sent.map((r) => r.body)).toContainEqual({
      first_name: 'Ada',
      last_name: 'Lovelace',
      domain: 'acme.test',
      reveal_personal_emails: false,
      reveal_phone_number: false,
    });
  });

  test('company_enrich looks companies up through GET /api/v1/organizations/enrich?domain=', async () => {
    const pid = await csvProject(t, 'Name,Website\nAcme,acme.test\nGlobex,https://www.globex.test/about\nUnknown,unknown.test\n');
    const col = await addColumn(t, pid, 'Company', 'company_enrich', { domain: '{{Website}}' });
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Company')).toMatchObject({
      status: 'completed',
      value: {
        name: 'Acme',
        domain: 'acme.test',
        industry: 'machinery',
        employees: 120,
        annual_revenue: 25_000_000,
        founded_year: 1949,
        location: 'Phoenix, United States',
        technologies: ['Nginx'],
      },
    });
    expect(cellOf(rows, 'Name', 'Globex', 'Company').value.name).toBe('Globex');
    expect(cellOf(rows, 'Name', 'Unknown', 'Company')).toMatchObject({ status: 'no_result', error: 'no company found for unknown.test' });
    const asked = apollo.requestsTo('/api/v1/organizations/enrich').map((r) => r.query.get('domain'));
    expect(asked).toEqual(expect.arrayContaining(['acme.test', 'globex.test', 'unknown.test']));
  });

  test('a 429 is retried by the job and the cell then completes', async () => {
    const pid = await csvProject(t, 'Name,Website\nInitech,initech.test\n');
    const col = await addColumn(t, pid, 'Company', 'company_enrich', { domain: '{{Website}}' });
    const asked = () => apollo.requestsTo('/api/v1/organizations/enrich').filter((r) => r.query.get('domain') === 'initech.test').length;
    const before = asked();
    apollo.failNext('/api/v1/organizations/enrich', 429);
    const rows = await runColumns(t, pid, [col], 20_000);
    expect(cellOf(rows, 'Name', 'Initech', 'Company')).toMatchObject({ status: 'completed', value: { name: 'Initech' } });
    expect(asked() - before).toBe(2);
  }, 25_000);

  test('a provider that keeps answering 500 leaves the cell in error once the attempts are spent', async () => {
    const pid = await csvProject(t, 'Name,Website\nUmbrella,umbrella.test\n');
    const col = await addColumn(t, pid, 'Company', 'company_enrich', { domain: '{{Website}}' });
    apollo.failNext('/api/v1/organizations/enrich', 500, 2);
    const rows = await runColumns(t, pid, [col], 20_000);
    expect(cellOf(rows, 'Name', 'Umbrella', 'Company')).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 500') });
  }, 25_000);

  test('live mode without APOLLO_API_KEY: each cell is in error naming the variable', async () => {
    const restore = setEnv({ APOLLO_API_KEY: undefined });
    try {
      const pid = await csvProject(t, 'Name,Website\nHooli,hooli.test\n');
      const company = await addColumn(t, pid, 'Company', 'company_enrich', { domain: '{{Website}}' });
      const person = await addColumn(t, pid, 'Person', 'person_enrich', { name: 'Gavin Belson', domain: '{{Website}}' });
      const rows = await runColumns(t, pid, [company, person]);
      for (const col of ['Company', 'Person']) {
        expect(cellOf(rows, 'Name', 'Hooli', col)).toMatchObject({ status: 'error', error: expect.stringContaining('APOLLO_API_KEY') });
      }
    } finally {
      restore();
    }
  });
});

describe('Apollo tools: how failures are classed', () => {
  const live = { providerMode: 'live' } as const;
  const company = (domain: string) => runTool(companyEnrich, [{}], { domain }, live);

  test('429 and 5xx are retryable errors (the job is retried); 401 is a permanent one', async () => {
    apollo.failNext('/api/v1/organizations/enrich', 429);
    apollo.failNext('/api/v1/organizations/enrich', 503);
    for (const status of [429, 503]) {
      expect(await company('acme.test')).toEqual([{ status: 'error', error: expect.stringContaining(`HTTP ${status}`), retryable: true }]);
    }
    const wrongKey = await runTool(
      personEnrich,
      [{}],
      { email: 'ada@acme.test' },
      { ...live, env: { ...process.env, APOLLO_API_KEY: 'wrong' } },
    );
    expect(wrongKey).toEqual([{ status: 'error', error: expect.stringContaining('HTTP 401'), retryable: false }]);
  });

  test('a 422 about one row is that row’s error, not the batch’s', async () => {
    apollo.failNext('/api/v1/organizations/enrich', 422, 1, JSON.stringify({ error: 'invalid domain' }));
    expect(await company('acme.test')).toEqual([{ status: 'error', error: expect.stringContaining('HTTP 422'), retryable: false }]);
  });

  test('cache keys: one per person identity and per company domain', () => {
    const p = (config: Record<string, string>) => personEnrich.cacheKey?.({ rowId: '1', config, row: {} });
    expect(p({ email: 'Ada@Acme.test' })).toBe(p({ email: 'ada@acme.test', first_name: 'x' }));
    expect(p({ first_name: 'Ada' })).toBeNull();
    const c = (domain: string) => companyEnrich.cacheKey?.({ rowId: '1', config: { domain }, row: {} });
    expect(c('https://www.acme.test/x')).toBe(c('acme.test'));
  });
});
