import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import emailFinder from '../../plugins/tools/email_finder/index.ts';
import emailValidator from '../../plugins/tools/email_validator/index.ts';
import { DIALECTS } from '../support/databases.ts';
import { type DnsServer, startDnsServer } from '../support/dns-server.ts';
import { runTool } from 'workflow-service/plugin-testing';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, runColumns, setEnv, SERVICE_START_MS } from './enrich-helpers.ts';

/** The mail world of these tests, served by a local DNS responder (DNS_SERVER=127.0.0.1:<port>). */
const ZONE = {
  'acme.test': {
    MX: [
      { priority: 20, exchange: 'mx2.acme.test' },
      { priority: 10, exchange: 'mx1.acme.test' },
    ],
    A: ['192.0.2.10'],
  },
  'nomail.test': { MX: [{ priority: 0, exchange: '' }] }, // null MX (RFC 7505)
  'webonly.test': { A: ['192.0.2.20'] },
};

let dns: DnsServer;
let restoreEnv: () => void;
beforeAll(async () => {
  dns = await startDnsServer(ZONE, { servfail: ['broken.test'], refused: ['refused.test'] });
  restoreEnv = setEnv({ DNS_SERVER: dns.address });
}, SERVICE_START_MS);
afterAll(async () => {
  restoreEnv();
  await dns.stop();
});

describe.each(DIALECTS)('email_finder and email_validator on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live' });
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('email_finder guesses the address by pattern once MX shows the domain receives mail', async () => {
    const pid = await csvProject(
      t,
      [
        'First,Last,Domain',
        'Ada,Lovelace,acme.test',
        'José,García-Márquez,https://www.acme.test/about',
        'Grace,Hopper,nomail.test',
        'Alan,Turing,webonly.test',
        'Ken,Thompson,broken.test',
        'Linus,,acme.test',
        '',
      ].join('\n'),
    );
    const before = dns.queries.length;
    const col = await addColumn(t, pid, 'Email', 'email_finder', { first_name: '{{First}}', last_name: '{{Last}}', domain: '{{Domain}}' });
    const known = await addColumn(t, pid, 'Email (flast)', 'email_finder', {
      first_name: '{{First}}',
      last_name: '{{Last}}',
      domain: '{{Domain}}',
      pattern: '{f}{last}',
    });
    const rows = await runColumns(t, pid, [col, known]);
    const ada = cellOf(rows, 'First', 'Ada', 'Email');
    expect(ada.status).toBe('completed');
    expect(ada.value).toMatchObject({
      email: 'ada.lovelace@acme.test',
      pattern: '{first}.{last}',
      domain: 'acme.test',
      mx: ['mx1.acme.test', 'mx2.acme.test'],
      verification: 'domain_accepts_mail',
    });
    expect(ada.value.candidates.slice(0, 4)).toEqual([
      'ada.lovelace@acme.test',
      'alovelace@acme.test',
      'ada@acme.test',
      'adalovelace@acme.test',
    ]);
    expect(cellOf(rows, 'First', 'José', 'Email').value.email).toBe('jose.garciamarquez@acme.test');
    expect(cellOf(rows, 'First', 'Ada', 'Email (flast)').value).toMatchObject({ email: 'alovelace@acme.test', pattern: '{f}{last}' });
    expect(cellOf(rows, 'First', 'Grace', 'Email')).toMatchObject({ status: 'no_result', error: 'nomail.test accepts no mail (null MX)' });
    expect(cellOf(rows, 'First', 'Alan', 'Email')).toMatchObject({ status: 'no_result', error: 'webonly.test has no MX record' });
    expect(cellOf(rows, 'First', 'Ken', 'Email')).toMatchObject({ status: 'error', error: expect.stringContaining('ESERVFAIL') });
    expect(cellOf(rows, 'First', 'Linus', 'Email')).toMatchObject({ status: 'skipped', error: 'missing input: last_name' });
    // One question per domain and batch, however many people work there.
    const asked = dns.queries.slice(before).filter((q) => q === 'acme.test MX').length;
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(2);
  });

  test('email_validator gives a verdict from syntax, MX, the disposable list and role accounts', async () => {
    const emails = [
      'ada.lovelace@acme.test',
      'Info@Acme.test',
      'someone@mailinator.com',
      'not-an-email',
      'bob@nomail.test',
      'bob@nowhere.test',
      'a..b@acme.test',
      'bob@broken.test',
    ];
    const pid = await csvProject(t, `Email\n${emails.join('\n')}\n`);
    const col = await addColumn(t, pid, 'Check', 'email_validator', { email: '{{Email}}' });
    const rows = await runColumns(t, pid, [col]);
    const check = (email: string) => cellOf(rows, 'Email', email, 'Check');
    expect(check('ada.lovelace@acme.test')).toMatchObject({
      status: 'completed',
      value: {
        email: 'ada.lovelace@acme.test',
        verdict: 'valid',
        reason: null,
        checks: { syntax: true, mx: true, disposable: false, role: false },
        mx: ['mx1.acme.test', 'mx2.acme.test'],
      },
    });
    expect(check('Info@Acme.test').value).toMatchObject({
      email: 'info@acme.test',
      verdict: 'risky',
      reason: 'role account, not a person',
      checks: { role: true, mx: true },
    });
    expect(check('someone@mailinator.com').value).toMatchObject({
      verdict: 'invalid',
      reason: 'disposable email domain',
      checks: { disposable: true, mx: null },
    });
    expect(check('not-an-email').value).toMatchObject({ verdict: 'invalid', checks: { syntax: false } });
    expect(check('a..b@acme.test').value).toMatchObject({ verdict: 'invalid', checks: { syntax: false } });
    expect(check('bob@nomail.test').value).toMatchObject({
      verdict: 'invalid',
      reason: 'nomail.test accepts no mail (null MX)',
      checks: { mx: false },
    });
    expect(check('bob@nowhere.test').value).toMatchObject({ verdict: 'invalid', reason: 'nowhere.test has no MX record' });
    expect(check('bob@broken.test')).toMatchObject({ status: 'error', error: expect.stringContaining('ESERVFAIL') });
    // The disposable list settles it without asking DNS.
    expect(dns.queries).not.toContain('mailinator.com MX');
  });
});

describe('email tools: failures of the resolver itself', () => {
  const live = { providerMode: 'live' } as const;

  test('a DNS server that refuses to answer fails the batch as retryable (the job is retried)', async () => {
    const failed = { status: 'error' as const, error: expect.stringContaining('EREFUSED'), retryable: true };
    expect(await runTool(emailValidator, [{}, {}], { email: 'x@refused.test' }, live)).toEqual([failed, failed]);
  });

  test('a DNS_SERVER that is not an address fails with a message naming it', async () => {
    const finder = await runTool(
      emailFinder,
      [{}],
      { first_name: 'A', last_name: 'B', domain: 'acme.test' },
      { ...live, env: { DNS_SERVER: 'not an address' } },
    );
    expect(finder).toEqual([{ status: 'error', error: expect.stringContaining('DNS_SERVER'), retryable: false }]);
  });

  test('the sandbox twins ask no DNS server', async () => {
    const before = dns.queries.length;
    const [found] = await runTool(
      emailFinder,
      [{}],
      { first_name: 'Ada', last_name: 'Lovelace', domain: 'acme.test' },
      { providerMode: 'sandbox' },
    );
    expect(found).toMatchObject({ status: 'ok', value: { email: 'ada.lovelace@acme.test', mx: ['mx.sandbox.example.com'] } });
    const [checked] = await runTool(emailValidator, [{}], { email: 'bob@nothing.invalid' }, { providerMode: 'sandbox' });
    expect(checked).toMatchObject({ status: 'ok', value: { verdict: 'invalid', checks: { mx: false } } });
    expect(dns.queries.length).toBe(before);
  });
});
