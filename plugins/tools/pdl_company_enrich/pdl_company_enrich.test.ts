import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { assertTool, runTool, testToolContext } from 'workflow-service/plugin-testing';
import type { LoopbackProvider } from '../../_providers/loopback-provider.ts';
import { PDL_TEST_KEY, startFakePdl } from '../../_providers/pdl/fake-pdl.ts';
import company from './index.ts';

const ACME = {
  id: 'pdl-acme',
  name: 'acme',
  display_name: 'Acme',
  website: 'acme.test',
  industry: 'machinery',
  employee_count: 120,
  size: '51-200',
  founded: 1949,
  type: 'private',
  ticker: null,
  summary: 'Acme makes everything.',
  tags: ['rockets', 'anvils'],
  linkedin_url: 'linkedin.com/company/acme',
  twitter_url: null,
  facebook_url: null,
  location: { name: 'Phoenix, Arizona, United States', country: 'united states' },
  likelihood: 10,
};

let pdl: LoopbackProvider;
let allowPrivate: string | undefined;
const live = (key = PDL_TEST_KEY) => ({ providerMode: 'live' as const, env: { PDL_API_KEY: key, PDL_BASE_URL: pdl.url } });

beforeAll(() => {
  pdl = startFakePdl({ companies: [ACME] });
  // The loopback server is a private address, which safeFetch refuses unless told otherwise.
  allowPrivate = process.env.ALLOW_PRIVATE_NETWORK;
  process.env.ALLOW_PRIVATE_NETWORK = '1';
});
afterAll(() => {
  pdl.stop();
  if (allowPrivate === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
  else process.env.ALLOW_PRIVATE_NETWORK = allowPrivate;
});

test('pdl_company_enrich is a valid tool definition', () => {
  expect(() => assertTool(company, 'pdl_company_enrich')).not.toThrow();
});

describe('against a server speaking PDL’s company enrichment API', () => {
  test('matches by website or name; an unknown company is no result', async () => {
    const rows = [{ Website: 'https://www.acme.test/' }, { Website: 'unknown.test' }];
    const [acme, unknown] = await runTool(company, rows, { website: '{{Website}}' }, live());
    expect(acme).toEqual({
      status: 'ok',
      value: {
        name: 'Acme',
        domain: 'acme.test',
        industry: 'machinery',
        employees: 120,
        size: '51-200',
        founded: 1949,
        type: 'private',
        ticker: null,
        summary: 'Acme makes everything.',
        tags: ['rockets', 'anvils'],
        location: 'Phoenix, Arizona, United States',
        country: 'united states',
        linkedin_url: 'linkedin.com/company/acme',
        twitter_url: null,
        facebook_url: null,
        likelihood: 10,
        pdl_id: 'pdl-acme',
      },
    });
    expect(unknown).toEqual({ status: 'no_result', reason: 'No records were found matching your request' });
    expect((await runTool(company, [{ Name: 'ACME' }], { name: '{{Name}}' }, live()))[0]).toMatchObject({ value: { employees: 120 } });
    const sent = pdl.sentTo('/v5/company/enrich');
    expect(sent.every((r) => r.headers.get('x-api-key') === PDL_TEST_KEY)).toBe(true);
    expect(sent[0]?.query.get('website')).toBe('https://www.acme.test/');
  });

  test('a row naming no company is no result without a request', async () => {
    const before = pdl.sent.length;
    expect(await runTool(company, [{ Website: ' ' }], { website: '{{Website}}' }, live())).toEqual([
      { status: 'no_result', reason: 'give a website, a name or a LinkedIn URL' },
    ]);
    expect(pdl.sent.length).toBe(before);
  });

  test('a bad key fails every row, not retried; a 429 is retryable with PDL’s Retry-After, then succeeds', async () => {
    const rows = [{ Website: 'acme.test' }, { Website: 'globex.test' }];
    for (const o of await runTool(company, rows, { website: '{{Website}}' }, live('bad-key-000'))) {
      expect(o).toEqual({ status: 'error', error: 'People Data Labs: Invalid API Key [invalid_auth] (HTTP 401)', retryable: false });
    }
    pdl.failNext({
      status: 429,
      headers: { 'Retry-After': '2' },
      body: { status: 429, error: { type: 'rate_limit_error', message: 'Too fast' } },
    });
    const item = { rowId: '1', config: { website: 'acme.test' }, row: {} };
    const enrichOne = company.enrichOne as NonNullable<typeof company.enrichOne>;
    await expect(enrichOne(item, testToolContext(company, live()))).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
    });
    expect(await enrichOne(item, testToolContext(company, live()))).toMatchObject({ status: 'ok', value: { name: 'Acme' } });
  });
});

test('sandbox mode: the same made-up company under example.com every time, without a request', async () => {
  const before = pdl.sent.length;
  const rows = [{ Website: 'acme.com' }, { Website: 'https://globex.com/about' }];
  const first = await runTool(company, rows, { website: '{{Website}}' }, { providerMode: 'sandbox', env: {} });
  expect(await runTool(company, rows, { website: '{{Website}}' }, { providerMode: 'sandbox', env: {} })).toEqual(first);
  expect(first.map((o) => (o.status === 'ok' ? (o.value as { domain: string }).domain : o.status))).toEqual([
    'acme.example.com',
    'globex.example.com',
  ]);
  expect(pdl.sent.length).toBe(before);
});
