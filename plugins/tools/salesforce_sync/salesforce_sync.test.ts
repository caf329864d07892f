import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { assertTool, runTool } from 'workflow-service/plugin-testing';
import { type FakeSalesforce, type FakeSalesforceOptions, startFakeSalesforce } from './fake-salesforce.ts';
import salesforceSync from './index.ts';

const TOKEN = '00D5e000000abcd!AQ8AQexampleaccesstoken';
const servers: FakeSalesforce[] = [];
let allowPrivate: string | undefined;

// The fake listens on loopback, which safeFetch refuses unless told otherwise.
beforeAll(() => {
  allowPrivate = process.env.ALLOW_PRIVATE_NETWORK;
  process.env.ALLOW_PRIVATE_NETWORK = '1';
});
afterAll(() => {
  if (allowPrivate === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
  else process.env.ALLOW_PRIVATE_NETWORK = allowPrivate;
});
afterEach(() => {
  for (const s of servers.splice(0)) s.stop();
});

function fake(options: Partial<FakeSalesforceOptions> = {}): FakeSalesforce {
  const server = startFakeSalesforce({ token: TOKEN, ...options });
  servers.push(server);
  return server;
}

/** Live mode against the fake; `env` adds or removes (undefined) variables. */
const live = (server: FakeSalesforce, env: Record<string, string | undefined> = {}) => ({
  providerMode: 'live' as const,
  env: { SALESFORCE_INSTANCE_URL: server.url, SALESFORCE_ACCESS_TOKEN: TOKEN, SALESFORCE_LOGIN_URL: server.url, ...env },
});

const fieldsOf = (server: FakeSalesforce, object: string) => [...(server.records[object]?.values() ?? [])].map((r) => r.fields);
const recordOf = (r: unknown) => (r as { value: { id: string; url: string; action: string } }).value;

test('salesforce_sync is a valid tool definition', () => {
  expect(() => assertTool(salesforceSync, 'salesforce_sync')).not.toThrow();
});

test('Account by domain: the first run creates it, a re-run updates the same one (matched on Website)', async () => {
  const sf = fake();
  const config = { object: 'Account' as const, key: '{{Website}}', fields: { Name: '{{Name}}', Industry: '{{Industry}}' } };
  const first = await runTool(
    salesforceSync,
    [{ Name: 'Acme', Website: 'https://www.acme.test/about', Industry: 'Machinery' }],
    config,
    live(sf),
  );
  expect(first).toEqual([
    { status: 'ok', value: { id: expect.stringMatching(/^001\w{15}$/), url: expect.any(String), action: 'created' } },
  ]);
  const { id } = recordOf(first[0]);
  expect(recordOf(first[0]).url).toBe(`${sf.url}/lightning/r/Account/${id}/view`);
  expect(fieldsOf(sf, 'Account')).toEqual([{ Name: 'Acme', Industry: 'Machinery', Website: 'acme.test' }]);

  const again = await runTool(salesforceSync, [{ Name: 'Acme Corp', Website: 'acme.test', Industry: 'Rockets' }], config, live(sf));
  expect(again).toEqual([{ status: 'ok', value: { id, url: recordOf(first[0]).url, action: 'updated' } }]);
  expect(fieldsOf(sf, 'Account')).toEqual([{ Name: 'Acme Corp', Industry: 'Rockets', Website: 'acme.test' }]);
});

test('an Account entered by hand with https://www. in Website is updated, not duplicated, its Website kept', async () => {
  const sf = fake();
  const id = sf.seed('Account', { Name: 'Globex', Website: 'https://www.globex.test/' });
  const out = await runTool(
    salesforceSync,
    [{ D: 'globex.test' }],
    { object: 'Account', key: '{{D}}', fields: { Industry: 'Energy' } },
    live(sf),
  );
  expect(out).toEqual([{ status: 'ok', value: expect.objectContaining({ id, action: 'updated' }) }]);
  expect(fieldsOf(sf, 'Account')).toEqual([{ Name: 'Globex', Website: 'https://www.globex.test/', Industry: 'Energy' }]);
});

test('with an External ID field, one upsert request by it: 201 created, then 200 updated', async () => {
  const sf = fake();
  const config = { object: 'Account' as const, key: '{{Domain}}', external_id_field: 'Domain__c', fields: { Name: '{{Name}}' } };
  const first = await runTool(salesforceSync, [{ Domain: 'initech.test', Name: 'Initech' }], config, live(sf));
  const again = await runTool(salesforceSync, [{ Domain: 'https://initech.test', Name: 'Initech Inc' }], config, live(sf));
  expect([recordOf(first[0]).action, recordOf(again[0]).action]).toEqual(['created', 'updated']);
  expect(recordOf(again[0]).id).toBe(recordOf(first[0]).id);
  expect(fieldsOf(sf, 'Account')).toEqual([{ Name: 'Initech Inc', Domain__c: 'initech.test' }]);
  expect(sf.log.map((l) => l.call)).toEqual([
    'PATCH /services/data/v63.0/sobjects/Account/Domain__c/initech.test',
    'PATCH /services/data/v63.0/sobjects/Account/Domain__c/initech.test',
  ]);
});

test('the mapping: templates inside text, numbers stay numbers, empty cells left out unless clear_empty (null)', async () => {
  const sf = fake();
  const rows = [{ Domain: 'hooli.test', Name: 'Hooli', Staff: 1200, Sector: '' }];
  const fields = { Name: '{{Name}} (enriched)', NumberOfEmployees: '{{Staff}}', Industry: '{{Sector}}' };
  await runTool(salesforceSync, rows, { object: 'Account', key: '{{Domain}}', fields }, live(sf));
  expect(fieldsOf(sf, 'Account')).toEqual([{ Name: 'Hooli (enriched)', NumberOfEmployees: 1200, Website: 'hooli.test' }]);
  await runTool(salesforceSync, rows, { object: 'Account', key: '{{Domain}}', fields, clear_empty: true }, live(sf));
  expect(fieldsOf(sf, 'Account')[0]).toMatchObject({ Industry: null });
});

test('Contact by email: same record on re-run; a row Salesforce refuses (a required field) is that row’s error', async () => {
  const sf = fake();
  const config = { object: 'Contact' as const, key: '{{Email}}', fields: { FirstName: '{{First}}', LastName: '{{Last}}' } };
  const rows = [
    { Email: 'Ada@Acme.test', First: 'Ada', Last: 'Lovelace' },
    { Email: 'nolast@acme.test', First: 'No', Last: '' },
  ];
  const first = await runTool(salesforceSync, rows, config, live(sf));
  expect(first[0]).toMatchObject({ status: 'ok', value: { action: 'created' } });
  expect(first[1]).toEqual({
    status: 'error',
    error: 'Salesforce answered HTTP 400: REQUIRED_FIELD_MISSING: Required fields are missing: [LastName]',
    retryable: false,
  });
  const again = await runTool(salesforceSync, [{ Email: 'ada@acme.test', First: 'Augusta Ada', Last: 'King' }], config, live(sf));
  expect(again).toEqual([{ status: 'ok', value: { ...recordOf(first[0]), action: 'updated' } }]);
  expect(fieldsOf(sf, 'Contact')).toEqual([{ FirstName: 'Augusta Ada', LastName: 'King', Email: 'ada@acme.test' }]);
});

test('Lead by email: a converted lead is left alone and a new lead is made', async () => {
  const sf = fake();
  sf.seed('Lead', { LastName: 'Hopper', Company: 'Navy', Email: 'grace@navy.test', IsConverted: true });
  const config = { object: 'Lead' as const, key: '{{Email}}', fields: { LastName: 'Hopper', Company: 'Navy' } };
  const out = await runTool(salesforceSync, [{ Email: 'grace@navy.test' }], config, live(sf));
  expect(out).toEqual([{ status: 'ok', value: expect.objectContaining({ id: expect.stringMatching(/^00Q/), action: 'created' }) }]);
  expect(sf.records.Lead?.size).toBe(2);
});

test('a 429 with Retry-After is waited out, then the request succeeds', async () => {
  const sf = fake({ limit: { max: 2, windowMs: 1000 } });
  const rows = ['a', 'b', 'c'].map((n) => ({ Email: `${n}@acme.test`, Last: n }));
  const out = await runTool(salesforceSync, rows, { object: 'Contact', key: '{{Email}}', fields: { LastName: '{{Last}}' } }, live(sf));
  expect(out.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
  expect(sf.records.Contact?.size).toBe(3);
  const throttled = sf.log.filter((l) => l.status === 429);
  expect(throttled.length).toBeGreaterThan(0);
  for (const t of throttled) {
    // The next request of the same kind came after the 1 s asked for (timers never fire early; 5 ms for clock rounding).
    const retry = sf.log.find((l) => l.call === t.call && l.at > t.at && l.status !== 429);
    expect(retry && retry.at - t.at).toBeGreaterThanOrEqual(995);
  }
});

test('REQUEST_LIMIT_EXCEEDED (the org’s daily allowance) is not waited out: the rows go back to the host, retryable', async () => {
  const sf = fake({ dailyLeft: 0 });
  const out = await runTool(salesforceSync, [{ D: 'acme.test' }, { D: 'globex.test' }], { object: 'Account', key: '{{D}}' }, live(sf));
  expect(out).toEqual(
    [0, 1].map(() => ({
      status: 'error',
      error:
        "Salesforce's API request limit is reached (REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded.): the rows are tried again later",
      retryable: true,
    })),
  );
});

test('missing credentials name the variables; an expired token is refused without echoing it', async () => {
  const sf = fake();
  const rows = [{ D: 'acme.test' }];
  const config = { object: 'Account' as const, key: '{{D}}' };
  expect(await runTool(salesforceSync, rows, config, live(sf, { SALESFORCE_ACCESS_TOKEN: undefined }))).toEqual([
    {
      status: 'error',
      error:
        'SALESFORCE_ACCESS_TOKEN is not set (nor SALESFORCE_REFRESH_TOKEN with SALESFORCE_CLIENT_ID to get one); set it or run with PROVIDER_MODE=sandbox',
      retryable: false,
    },
  ]);
  const noInstance = await runTool(salesforceSync, rows, config, live(sf, { SALESFORCE_INSTANCE_URL: undefined }));
  expect(noInstance[0]).toMatchObject({ status: 'error', error: expect.stringContaining('SALESFORCE_INSTANCE_URL is not set') });
  sf.tokens.delete(TOKEN);
  const [expired] = await runTool(salesforceSync, rows, config, live(sf));
  expect(expired).toEqual({
    status: 'error',
    error: expect.stringContaining('Salesforce refused the access token (HTTP 401: INVALID_SESSION_ID: Session expired or invalid'),
    retryable: false,
  });
  expect(JSON.stringify(expired)).not.toContain('AQ8AQexample');
});

test('with a refresh token, an expired session is renewed once and the rows go through', async () => {
  const sf = fake({ refreshToken: '5Aep861-refresh' });
  sf.tokens.delete(TOKEN);
  const env = { SALESFORCE_REFRESH_TOKEN: '5Aep861-refresh', SALESFORCE_CLIENT_ID: 'client-id' };
  const rows = ['a', 'b', 'c'].map((n) => ({ D: `${n}.test` }));
  const out = await runTool(salesforceSync, rows, { object: 'Account', key: '{{D}}', fields: { Name: '{{D}}' } }, live(sf, env));
  expect(out.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
  expect(sf.log.filter((l) => l.call === 'POST /services/oauth2/token')).toHaveLength(1);

  // The refresh-token flow alone: the first row gets the token and the instance URL.
  const fresh = fake({ refreshToken: '5Aep861-refresh' });
  const alone = { ...env, SALESFORCE_ACCESS_TOKEN: undefined, SALESFORCE_INSTANCE_URL: undefined };
  const [made] = await runTool(
    salesforceSync,
    [{ D: 'a.test' }],
    { object: 'Account', key: '{{D}}', fields: { Name: 'A' } },
    live(fresh, alone),
  );
  expect(made).toMatchObject({ status: 'ok', value: { url: expect.stringContaining(`${fresh.url}/lightning/r/Account/`) } });

  const bad = fake({ refreshToken: 'another' });
  bad.tokens.delete(TOKEN);
  const [refused] = await runTool(salesforceSync, [{ D: 'a.test' }], { object: 'Account', key: '{{D}}' }, live(bad, env));
  expect(refused).toMatchObject({ status: 'error', error: expect.stringContaining('invalid_grant: expired access/refresh token') });
  expect(JSON.stringify(refused)).not.toContain('5Aep861');
});

test('a field Salesforce does not have, or an external ID field that is not one, fails the rows with Salesforce’s message', async () => {
  const sf = fake();
  const rows = [{ D: 'acme.test' }, { D: 'globex.test' }];
  const unknown = await runTool(salesforceSync, rows, { object: 'Account', key: '{{D}}', fields: { Favorite_Color__c: 'blue' } }, live(sf));
  expect(unknown).toEqual(
    rows.map(() => ({
      status: 'error',
      error: "Salesforce refused the field mapping: INVALID_FIELD: No such column 'Favorite_Color__c' on sobject of type Account",
      retryable: false,
    })),
  );
  const notExternal = await runTool(salesforceSync, rows, { object: 'Account', key: '{{D}}', external_id_field: 'Website' }, live(sf));
  expect(notExternal[0]).toMatchObject({
    error: expect.stringContaining('Provided external ID field does not exist or is not accessible: Website'),
  });
  expect(sf.records.Account?.size).toBe(0);
});

test('sandbox: no request; the same key gives the same fake record, a re-run says updated', async () => {
  const config = { object: 'Contact' as const, key: '{{Email}}', fields: { LastName: '{{Last}}' } };
  const rows = [{ Email: 'sbx@acme.test', Last: 'A' }, { Email: 'SBX@acme.test', Last: 'B' }, { Email: 'other@acme.test' }];
  const values = (await runTool(salesforceSync, rows, config, { providerMode: 'sandbox', env: {} })).map(recordOf);
  expect(values[0]).toEqual({
    id: expect.stringMatching(/^003SBX\w{12}$/),
    url: expect.stringMatching(/^https:\/\/sandbox\.my\.salesforce\.example\.com\/lightning\/r\/Contact\/003SBX\w{12}\/view$/),
    action: 'created',
  });
  expect(values[1]).toEqual({ ...(values[0] as object), action: 'updated' } as never);
  expect(values[2]?.id).not.toBe(values[0]?.id);
});

test('rows without a key are skipped, a key that is not an email is that row’s error, and the config is checked', async () => {
  const out = await runTool(
    salesforceSync,
    [{ E: '' }, { E: 'ada at acme' }],
    { object: 'Lead', key: '{{E}}' },
    { providerMode: 'sandbox' },
  );
  expect(out).toEqual([
    { status: 'skipped', reason: 'missing input: key' },
    { status: 'error', error: 'key "ada at acme" is not an email address', retryable: false },
  ]);
  const run = (config: object) => runTool(salesforceSync, [], config as never, { providerMode: 'sandbox' });
  await expect(run({ object: 'Account', key: 'x', fields: { website: 'y' } })).rejects.toThrow(
    'config.fields.website website is filled from key',
  );
  await expect(run({ object: 'Account', key: 'x', external_id_field: 'Domain__c', fields: { Domain__c: 'y' } })).rejects.toThrow(
    'config.fields.Domain__c',
  );
  await expect(run({ object: 'Account', key: 'x', external_id_field: 'Id' })).rejects.toThrow('config.external_id_field');
  await expect(run({ object: 'Opportunity', key: 'x' })).rejects.toThrow('config.object');
});
