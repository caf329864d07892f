import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { assertTool, runTool, testToolContext } from 'workflow-service/plugin-testing';
import type { LoopbackProvider } from '../../_providers/loopback-provider.ts';
import { PDL_TEST_KEY, startFakePdl } from '../../_providers/pdl/fake-pdl.ts';
import person from './index.ts';

const ADA = {
  id: 'pdl-ada',
  full_name: 'Ada Lovelace',
  first_name: 'Ada',
  last_name: 'Lovelace',
  job_title: 'Head of Engines',
  job_title_levels: ['director'],
  job_company_name: 'Acme',
  job_company_website: 'acme.test',
  linkedin_url: 'linkedin.com/in/ada',
  location_name: 'London, England, United Kingdom',
  work_email: 'ada@acme.test',
  personal_emails: ['ada@home.test'],
  likelihood: 9,
};
const KEN = { ...ADA, id: 'pdl-ken', full_name: 'Ken Thompson', first_name: 'Ken', last_name: 'Thompson', work_email: null, likelihood: 5 };

let pdl: LoopbackProvider;
let allowPrivate: string | undefined;
const live = (key = PDL_TEST_KEY) => ({ providerMode: 'live' as const, env: { PDL_API_KEY: key, PDL_BASE_URL: pdl.url } });
const byName = { first_name: '{{First}}', last_name: '{{Last}}', company: '{{Company}}' };

beforeAll(() => {
  pdl = startFakePdl({ people: [ADA, KEN] });
  // The loopback server is a private address, which safeFetch refuses unless told otherwise.
  allowPrivate = process.env.ALLOW_PRIVATE_NETWORK;
  process.env.ALLOW_PRIVATE_NETWORK = '1';
});
afterAll(() => {
  pdl.stop();
  if (allowPrivate === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
  else process.env.ALLOW_PRIVATE_NETWORK = allowPrivate;
});

test('pdl_person_enrich is a valid tool definition', () => {
  expect(() => assertTool(person, 'pdl_person_enrich')).not.toThrow();
});

describe('against a server speaking PDL’s person enrichment API', () => {
  test('matches by email or by name and company, with the key in X-Api-Key; no match is no result', async () => {
    const [byEmail] = await runTool(person, [{ Email: 'ada@home.test' }], { email: '{{Email}}' }, live());
    expect(byEmail).toEqual({
      status: 'ok',
      value: {
        email: 'ada@acme.test',
        name: 'Ada Lovelace',
        first_name: 'Ada',
        last_name: 'Lovelace',
        title: 'Head of Engines',
        levels: ['director'],
        company: 'Acme',
        company_domain: 'acme.test',
        linkedin_url: 'linkedin.com/in/ada',
        location: 'London, England, United Kingdom',
        likelihood: 9,
        pdl_id: 'pdl-ada',
      },
    });
    const outcomes = await runTool(
      person,
      [
        { First: 'Ada', Last: 'Lovelace', Company: 'acme.test' },
        { First: 'Nobody', Last: 'Here', Company: 'acme.test' },
        { First: 'Linus', Last: 'Torvalds', Company: '' },
      ],
      byName,
      live(),
    );
    expect(outcomes[0]).toMatchObject({ status: 'ok', value: { email: 'ada@acme.test', likelihood: 9 } });
    expect(outcomes[1]).toEqual({ status: 'no_result', reason: 'No records were found matching your request' });
    // A name alone cannot single a person out: no request.
    expect(outcomes[2]).toMatchObject({ status: 'no_result', reason: expect.stringContaining('a name with a company') });
    const sent = pdl.sentTo('/v5/person/enrich');
    expect(sent.every((r) => r.headers.get('x-api-key') === PDL_TEST_KEY && !r.query.has('api_key'))).toBe(true);
    expect(sent.map((r) => Object.fromEntries(r.query))).toContainEqual({
      first_name: 'Ada',
      last_name: 'Lovelace',
      company: 'acme.test',
      titlecase: 'true',
    });
    expect(sent.some((r) => r.query.get('first_name') === 'Linus')).toBe(false);
  });

  test('required and min_likelihood make an incomplete or weak match no result (PDL’s own rules)', async () => {
    const rows = [{ First: 'Ken', Last: 'Thompson', Company: 'acme.test' }];
    expect((await runTool(person, rows, byName, live()))[0]).toMatchObject({
      status: 'ok',
      value: { email: null, title: 'Head of Engines' },
    });
    expect(await runTool(person, rows, { ...byName, required: 'work_email' }, live())).toEqual([
      { status: 'no_result', reason: 'No records were found matching your request' },
    ]);
    expect((await runTool(person, rows, { ...byName, min_likelihood: 6 }, live()))[0]).toMatchObject({ status: 'no_result' });
    expect(pdl.sentTo('/v5/person/enrich').at(-2)?.query.get('required')).toBe('work_email');
  });

  test('a bad key, or credits used up (402), fails the rows with PDL’s words, not retried', async () => {
    const rows = [{ Email: 'ada@acme.test' }, { Email: 'ken@acme.test' }];
    for (const o of await runTool(person, rows, { email: '{{Email}}' }, live('wrong-key-1234'))) {
      expect(o).toEqual({ status: 'error', error: 'People Data Labs: Invalid API Key [invalid_auth] (HTTP 401)', retryable: false });
    }
    pdl.failNext({ status: 402, body: { status: 402, error: { type: 'payment_required', message: 'You have hit your account maximum' } } });
    const item = { rowId: '1', config: { email: 'ada@acme.test' }, row: {} };
    // Thrown, not answered for the row: it concerns every row, so the host stops the batch.
    await expect((person.enrichOne as NonNullable<typeof person.enrichOne>)(item, testToolContext(person, live()))).rejects.toMatchObject({
      status: 402,
      retryable: false,
      message: 'People Data Labs: You have hit your account maximum [payment_required] (HTTP 402)',
    });
  });

  test('a 429 is thrown as retryable with PDL’s Retry-After; the next try succeeds', async () => {
    pdl.failNext({
      status: 429,
      headers: { 'Retry-After': '3' },
      body: { status: 429, error: { type: 'rate_limit_error', message: 'Too fast' } },
    });
    const item = { rowId: '1', config: { email: 'ada@acme.test' }, row: {} };
    const enrichOne = person.enrichOne as NonNullable<typeof person.enrichOne>;
    await expect(enrichOne(item, testToolContext(person, live()))).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
      message: 'People Data Labs: Too fast [rate_limit_error] (HTTP 429)',
    });
    expect(await enrichOne(item, testToolContext(person, live()))).toMatchObject({ status: 'ok', value: { name: 'Ada Lovelace' } });
  });
});

test('sandbox mode: the same made-up person every time, under example.com, honouring required, without a request', async () => {
  const before = pdl.sent.length;
  const rows = ['Ada', 'Grace', 'Alan', 'Barbara', 'Edsger', 'Margaret'].map((First) => ({ First, Last: 'Example', Company: 'acme.com' }));
  const first = await runTool(person, rows, byName, { providerMode: 'sandbox', env: {} });
  expect(await runTool(person, rows, byName, { providerMode: 'sandbox', env: {} })).toEqual(first);
  const found = first.flatMap((o) => (o.status === 'ok' ? [o.value as { email: string | null; company_domain: string }] : []));
  expect(found.length).toBeGreaterThan(0);
  expect(found.every((p) => p.company_domain === 'acme.example.com')).toBe(true);
  const strict = await runTool(person, rows, { ...byName, required: 'work_email' }, { providerMode: 'sandbox', env: {} });
  expect(
    strict.every((o) => o.status === 'no_result' || (o.status === 'ok' && typeof (o.value as { email: unknown }).email === 'string')),
  ).toBe(true);
  expect(pdl.sent.length).toBe(before);
});
