import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { assertTool, runTool, testToolContext } from 'workflow-service/plugin-testing';
import type { LoopbackProvider } from '../../_providers/loopback-provider.ts';
import { startFakeZeroBounce, ZEROBOUNCE_TEST_KEY } from '../../_providers/zerobounce/fake-zerobounce.ts';
import verifier from './index.ts';

type Verdict = { status: string; sub_status: string | null };
const verdictOf = (o: { status: string; value?: unknown }) => (o.status === 'ok' ? (o.value as Verdict) : null);

let zb: LoopbackProvider;
let allowPrivate: string | undefined;
const live = (key = ZEROBOUNCE_TEST_KEY) => ({
  providerMode: 'live' as const,
  env: { ZEROBOUNCE_API_KEY: key, ZEROBOUNCE_BASE_URL: zb.url },
});

beforeAll(() => {
  zb = startFakeZeroBounce({
    'ada@acme.test': { status: 'valid' },
    'info@acme.test': { status: 'do_not_mail', sub_status: 'role_based' },
    'anyone@catchall.test': { status: 'catch-all' },
  });
  // The loopback server is a private address, which safeFetch refuses unless told otherwise.
  allowPrivate = process.env.ALLOW_PRIVATE_NETWORK;
  process.env.ALLOW_PRIVATE_NETWORK = '1';
});
afterAll(() => {
  zb.stop();
  if (allowPrivate === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
  else process.env.ALLOW_PRIVATE_NETWORK = allowPrivate;
});

test('zerobounce_email_verifier is a valid tool definition', () => {
  expect(() => assertTool(verifier, 'zerobounce_email_verifier')).not.toThrow();
});

describe('against a server speaking ZeroBounce’s validate API', () => {
  test('answers every verdict by default, with the sub-status and the domain’s facts', async () => {
    const rows = ['ada@acme.test', 'info@acme.test', 'nobody@acme.test', 'anyone@catchall.test', ''].map((Email) => ({ Email }));
    const outcomes = await runTool(verifier, rows, { email: '{{Email}}' }, live());
    expect(outcomes[0]).toEqual({
      status: 'ok',
      value: {
        status: 'valid',
        email: 'ada@acme.test',
        sub_status: null,
        free_email: false,
        did_you_mean: null,
        domain: 'acme.test',
        mx_found: true,
        mx_record: 'mx.acme.test',
        smtp_provider: 'google',
        domain_age_days: 9000,
        first_name: null,
        last_name: null,
        processed_at: '2026-03-01 10:00:00.000',
      },
    });
    expect(outcomes.slice(1, 4).map((o) => [verdictOf(o)?.status, verdictOf(o)?.sub_status])).toEqual([
      ['do_not_mail', 'role_based'],
      ['invalid', 'mailbox_not_found'],
      ['catch-all', null],
    ]);
    expect(outcomes[4]).toEqual({ status: 'skipped', reason: 'missing input: email' });
    expect(Object.fromEntries(zb.sentTo('/v2/validate')[0]?.query ?? [])).toEqual({
      api_key: ZEROBOUNCE_TEST_KEY,
      email: 'ada@acme.test',
      ip_address: '',
    });
  });

  test('accept: ["valid"] makes every other verdict no result naming it (the stop-when-valid step)', async () => {
    const rows = ['ada@acme.test', 'nobody@acme.test', 'anyone@catchall.test'].map((Email) => ({ Email }));
    expect(await runTool(verifier, rows, { email: '{{Email}}', accept: ['valid'] }, live())).toEqual([
      { status: 'ok', value: expect.objectContaining({ status: 'valid', email: 'ada@acme.test' }) },
      { status: 'no_result', reason: 'ZeroBounce says invalid (mailbox_not_found)' },
      { status: 'no_result', reason: 'ZeroBounce says catch-all' },
    ]);
    const lenient = await runTool(verifier, rows.slice(2), { email: '{{Email}}', accept: ['valid', 'catch-all'] }, live());
    expect(lenient[0]).toMatchObject({ status: 'ok', value: { status: 'catch-all' } });
  });

  test('checks the address a finder column found, or a guess built from the row', async () => {
    const rows = [
      { 'Work Email': { email: 'ada@acme.test', score: 96 }, First: 'x', Last: 'y', Domain: 'z' },
      { 'Work Email': null, First: 'Ada', Last: '', Domain: 'acme.test' },
    ];
    const [fromFinder] = await runTool(verifier, rows.slice(0, 1), { email: '{{Work Email}}' }, live());
    expect(fromFinder).toMatchObject({ status: 'ok', value: { status: 'valid', email: 'ada@acme.test' } });
    const [guess] = await runTool(verifier, rows.slice(1), { email: '{{First}}@{{Domain}}' }, live());
    expect(guess).toMatchObject({ status: 'ok', value: { email: 'ada@acme.test' } });
  });

  test('a bad key (ZeroBounce’s 200 with an error) fails every row, not retried, and the key never shows', async () => {
    const rows = ['ada@acme.test', 'info@acme.test'].map((Email) => ({ Email }));
    for (const o of await runTool(verifier, rows, { email: '{{Email}}' }, live('wrong-key-4321'))) {
      expect(o).toEqual({ status: 'error', error: 'ZeroBounce: Invalid API key or your account ran out of credits', retryable: false });
    }
    zb.failNext({ status: 401, body: { error: 'Unauthorized' } });
    const [o] = await runTool(verifier, rows.slice(0, 1), { email: '{{Email}}' }, live());
    expect(o).toEqual({ status: 'error', error: 'ZeroBounce: Unauthorized (HTTP 401)', retryable: false });
  });

  test('a 429 is thrown as retryable with ZeroBounce’s Retry-After; the next try succeeds', async () => {
    zb.failNext({ status: 429, headers: { 'Retry-After': '60' }, body: { error: 'Too many requests' } });
    const item = { rowId: '1', config: { email: 'ada@acme.test' }, row: {} };
    const enrichOne = verifier.enrichOne as NonNullable<typeof verifier.enrichOne>;
    await expect(enrichOne(item, testToolContext(verifier, live()))).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 60_000,
      message: 'ZeroBounce: Too many requests (HTTP 429)',
    });
    expect(await enrichOne(item, testToolContext(verifier, live()))).toMatchObject({ status: 'ok', value: { status: 'valid' } });
  });
});

test('sandbox mode: the same verdict every time, the status a local part names, without a request', async () => {
  const before = zb.sent.length;
  const rows = ['valid@example.com', 'catch-all@example.com', 'do_not_mail@example.com', 'not-an-address', 'ada@acme.example.com'].map(
    (Email) => ({ Email }),
  );
  const first = await runTool(verifier, rows, { email: '{{Email}}' }, { providerMode: 'sandbox', env: {} });
  expect(await runTool(verifier, rows, { email: '{{Email}}' }, { providerMode: 'sandbox', env: {} })).toEqual(first);
  expect(first.slice(0, 4).map((o) => verdictOf(o)?.status)).toEqual(['valid', 'catch-all', 'do_not_mail', 'invalid']);
  expect(zb.sent.length).toBe(before);
});
