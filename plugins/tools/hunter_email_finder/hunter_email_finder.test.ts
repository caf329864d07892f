import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { assertTool, runTool, testToolContext } from 'workflow-service/plugin-testing';
import { HUNTER_TEST_KEY, startFakeHunter } from '../../_providers/hunter/fake-hunter.ts';
import type { LoopbackProvider } from '../../_providers/loopback-provider.ts';
import finder from './index.ts';

const ADA = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  email: 'ada@acme.test',
  score: 96,
  domain: 'acme.test',
  accept_all: false,
  position: 'Head of Engines',
  company: 'Acme',
  linkedin_url: 'https://www.linkedin.com/in/ada',
  twitter: null,
  phone_number: null,
  sources: [
    {
      domain: 'blog.acme.test',
      uri: 'http://blog.acme.test/team',
      extracted_on: '2025-01-02',
      last_seen_on: '2026-02-03',
      still_on_page: true,
    },
  ],
  verification: { date: '2026-02-03', status: 'valid' },
};
const KEN = { ...ADA, first_name: 'Ken', last_name: 'Thompson', email: 'ken@acme.test', score: 41, verification: null, sources: [] };

let hunter: LoopbackProvider;
let allowPrivate: string | undefined;
const live = (key = HUNTER_TEST_KEY) => ({ providerMode: 'live' as const, env: { HUNTER_API_KEY: key, HUNTER_BASE_URL: hunter.url } });
const config = { first_name: '{{First}}', last_name: '{{Last}}', domain: '{{Domain}}' };

beforeAll(() => {
  hunter = startFakeHunter([ADA, KEN]);
  // The loopback server is a private address, which safeFetch refuses unless told otherwise.
  allowPrivate = process.env.ALLOW_PRIVATE_NETWORK;
  process.env.ALLOW_PRIVATE_NETWORK = '1';
});
afterAll(() => {
  hunter.stop();
  if (allowPrivate === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
  else process.env.ALLOW_PRIVATE_NETWORK = allowPrivate;
});

test('hunter_email_finder is a valid tool definition', () => {
  expect(() => assertTool(finder, 'hunter_email_finder')).not.toThrow();
});

describe('against a server speaking Hunter’s email-finder API', () => {
  test('finds the address with its score, verification and sources; a person Hunter does not know is no result', async () => {
    const rows = [
      { First: 'Ada', Last: 'Lovelace', Domain: 'https://www.acme.test/about' },
      { First: 'Nobody', Last: 'Here', Domain: 'acme.test' },
      { First: 'Linus', Last: '', Domain: 'acme.test' },
    ];
    const [ada, nobody, linus] = await runTool(finder, rows, config, live());
    expect(ada).toEqual({
      status: 'ok',
      value: expect.objectContaining({
        email: 'ada@acme.test',
        score: 96,
        verification_status: 'valid',
        position: 'Head of Engines',
        sources: [{ uri: 'http://blog.acme.test/team', last_seen_on: '2026-02-03' }],
        source_count: 1,
      }),
    });
    expect(nobody).toEqual({ status: 'no_result', reason: 'Hunter found no address at acme.test' });
    // Not enough to ask Hunter: no request is made.
    expect(linus).toMatchObject({ status: 'no_result', reason: expect.stringContaining('give a first and last name') });
    const asked = hunter.sentTo('/v2/email-finder').map((r) => Object.fromEntries(r.query));
    expect(asked).toContainEqual({ domain: 'acme.test', first_name: 'Ada', last_name: 'Lovelace', api_key: HUNTER_TEST_KEY });
    expect(asked.some((q) => q.first_name === 'Linus')).toBe(false);
  });

  test('min_score turns a low-confidence guess into no result, saying why', async () => {
    const rows = [{ First: 'Ken', Last: 'Thompson', Domain: 'acme.test' }];
    expect(await runTool(finder, rows, { ...config, min_score: 70 }, live())).toEqual([
      { status: 'no_result', reason: 'Hunter’s best guess ken@acme.test scores 41, under min_score 70' },
    ]);
    expect((await runTool(finder, rows, config, live()))[0]).toMatchObject({ status: 'ok', value: { email: 'ken@acme.test', score: 41 } });
  });

  test('a bad key fails every row with Hunter’s own words, not retried, and the key never shows', async () => {
    const wrong = 'wrong-key-9876';
    const outcomes = await runTool(
      finder,
      [
        { First: 'Ada', Last: 'Lovelace', Domain: 'acme.test' },
        { First: 'Ken', Last: 'Thompson', Domain: 'acme.test' },
      ],
      config,
      live(wrong),
    );
    for (const o of outcomes) {
      expect(o).toEqual({
        status: 'error',
        error: 'Hunter: No user found for the API key supplied [authentication_failed] (HTTP 401)',
        retryable: false,
      });
    }
  });

  test('a 429 is thrown as retryable with Hunter’s Retry-After; the next try succeeds', async () => {
    hunter.failNext({
      status: 429,
      headers: { 'Retry-After': '7' },
      body: { errors: [{ id: 'too_many_requests', code: 429, details: 'You have reached your usage limit' }] },
    });
    const item = { rowId: '1', config: { first_name: 'Ada', last_name: 'Lovelace', domain: 'acme.test' }, row: {} };
    const enrichOne = finder.enrichOne as NonNullable<typeof finder.enrichOne>;
    // Thrown, not answered: a rate limit concerns every row, so the rows not yet started stop and the job is retried.
    await expect(enrichOne(item, testToolContext(finder, live()))).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 7000,
      message: 'Hunter: You have reached your usage limit [too_many_requests] (HTTP 429)',
    });
    expect(await enrichOne(item, testToolContext(finder, live()))).toMatchObject({ status: 'ok', value: { email: 'ada@acme.test' } });
  });

  test('a 403 (Hunter’s per-second limit) is retryable too; a 451 (the person opted out) is no result', async () => {
    const rows = [{ First: 'Ada', Last: 'Lovelace', Domain: 'acme.test' }];
    hunter.failNext({
      status: 403,
      body: { errors: [{ id: 'too_many_requests', code: 403, details: 'You have reached the rate limit' }] },
    });
    expect(await runTool(finder, rows, config, live())).toEqual([
      { status: 'error', error: 'Hunter: You have reached the rate limit [too_many_requests] (HTTP 403)', retryable: true },
    ]);
    hunter.failNext({ status: 451, body: { errors: [{ id: 'claimed_email', code: 451, details: 'This person asked us to stop' }] } });
    expect(await runTool(finder, rows, config, live())).toEqual([{ status: 'no_result', reason: 'This person asked us to stop' }]);
  });

  test('without HUNTER_API_KEY live mode says which variable to set', async () => {
    const [o] = await runTool(finder, [{ First: 'Ada', Last: 'Lovelace', Domain: 'acme.test' }], config, {
      providerMode: 'live',
      env: { HUNTER_BASE_URL: hunter.url },
    });
    expect(o).toEqual({ status: 'error', error: 'HUNTER_API_KEY is not set; set it or run with PROVIDER_MODE=sandbox', retryable: false });
  });
});

test('sandbox mode answers the same made-up address under example.com every time, without a request', async () => {
  const before = hunter.sent.length;
  const rows = [
    { First: 'Ada', Last: 'Lovelace', Domain: 'acme.com' },
    { First: 'Grace', Last: 'Hopper', Domain: 'globex.com' },
  ];
  const first = await runTool(finder, rows, config, { providerMode: 'sandbox', env: {} });
  expect(await runTool(finder, rows, config, { providerMode: 'sandbox', env: {} })).toEqual(first);
  const found = first.filter((o) => o.status === 'ok').map((o) => (o as { value: { email: string } }).value.email);
  expect(found.length).toBeGreaterThan(0);
  expect(found.every((e) => /@[a-z0-9-]+\.example\.com$/.test(e))).toBe(true);
  expect(hunter.sent.length).toBe(before);
});
