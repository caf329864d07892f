import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test';
import { assertTool, runTool } from 'workflow-service/plugin-testing';
import { type FakeHubSpot, type FakeHubSpotOptions, startFakeHubSpot } from './fake-hubspot.ts';
import hubspotSync from './index.ts';

const TOKEN = 'pat-eu1-11111111-2222-3333-4444-555555555555';
const servers: FakeHubSpot[] = [];
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

function fake(options: Partial<FakeHubSpotOptions> = {}): FakeHubSpot {
  const server = startFakeHubSpot({ token: TOKEN, ...options });
  servers.push(server);
  return server;
}

/** Live mode against the fake; `{token: undefined}` runs without a token. */
const live = (server: FakeHubSpot, o: { token?: string } = { token: TOKEN }) => ({
  providerMode: 'live' as const,
  env: { HUBSPOT_ACCESS_TOKEN: o.token, HUBSPOT_BASE_URL: server.url },
});

const properties = (server: FakeHubSpot, object: string) => [...(server.records[object]?.values() ?? [])].map((r) => r.properties);

test('hubspot_sync is a valid tool definition', () => {
  expect(() => assertTool(hubspotSync, 'hubspot_sync')).not.toThrow();
});

test('companies: the first run creates the company, a re-run updates the same one', async () => {
  const hs = fake();
  const config = { object: 'companies' as const, key: '{{Website}}', fields: { name: '{{Name}}', industry: '{{Industry}}' } };
  const first = await runTool(
    hubspotSync,
    [{ Name: 'Acme', Website: 'https://www.Acme.test/about', Industry: 'Machinery' }],
    config,
    live(hs),
  );
  expect(first).toEqual([
    {
      status: 'ok',
      value: {
        id: expect.any(String),
        url: expect.stringMatching(/^https:\/\/app-eu1\.hubspot\.com\/contacts\/4242\/record\/0-2\/\d+$/),
        action: 'created',
      },
    },
  ]);
  const id = (first[0] as { value: { id: string } }).value.id;
  expect(properties(hs, 'companies')).toEqual([{ name: 'Acme', domain: 'acme.test', industry: 'Machinery' }]);

  const again = await runTool(hubspotSync, [{ Name: 'Acme Corp', Website: 'acme.test', Industry: 'Rockets' }], config, live(hs));
  expect(again).toEqual([{ status: 'ok', value: { id, url: expect.stringContaining(`/record/0-2/${id}`), action: 'updated' } }]);
  expect(properties(hs, 'companies')).toEqual([{ name: 'Acme Corp', domain: 'acme.test', industry: 'Rockets' }]);
});

test('contacts are upserted by email through batch upsert; a re-run updates the same contact', async () => {
  const hs = fake();
  const config = { object: 'contacts' as const, key: '{{Email}}', fields: { firstname: '{{First}}', lastname: '{{Last}}' } };
  const first = await runTool(hubspotSync, [{ Email: 'Ada@Acme.test', First: 'Ada', Last: 'Lovelace' }], config, live(hs));
  expect(first).toEqual([{ status: 'ok', value: expect.objectContaining({ action: 'created' }) }]);
  const again = await runTool(hubspotSync, [{ Email: 'ada@acme.test', First: 'Augusta Ada', Last: 'King' }], config, live(hs));
  expect(again).toEqual([
    { status: 'ok', value: { ...(first[0] as { value: object }).value, url: expect.stringContaining('/record/0-1/'), action: 'updated' } },
  ]);
  expect(properties(hs, 'contacts')).toEqual([{ email: 'ada@acme.test', firstname: 'Augusta Ada', lastname: 'King' }]);
  expect(hs.log.filter((l) => l.call.startsWith('POST /crm/v3/objects/contacts')).map((l) => l.call)).toEqual([
    'POST /crm/v3/objects/contacts/batch/upsert',
    'POST /crm/v3/objects/contacts/batch/upsert',
  ]);
});

test('companies with a unique id_property go through batch upsert by it, and the domain is written too', async () => {
  const hs = fake();
  const config = { object: 'companies' as const, key: '{{Domain}}', id_property: 'wfs_domain', fields: { name: '{{Name}}' } };
  const first = await runTool(hubspotSync, [{ Domain: 'globex.test', Name: 'Globex' }], config, live(hs));
  const again = await runTool(hubspotSync, [{ Domain: 'www.globex.test', Name: 'Globex Corp' }], config, live(hs));
  expect([first[0]?.status, again[0]?.status]).toEqual(['ok', 'ok']);
  expect((again[0] as { value: { id: string; action: string } }).value).toMatchObject({
    id: (first[0] as { value: { id: string } }).value.id,
    action: 'updated',
  });
  expect(properties(hs, 'companies')).toEqual([{ wfs_domain: 'globex.test', name: 'Globex Corp', domain: 'globex.test' }]);
  expect(hs.log.some((l) => l.call.endsWith('/search'))).toBe(false);
});

test('the mapping: templates inside text, numbers, fixed text; empty cells leave the CRM value unless clear_empty', async () => {
  const hs = fake();
  const rows = [{ Domain: 'initech.test', Name: 'Initech', City: '', Staff: 120 }];
  const fields = { name: '{{Name}} (via enrichment)', numberofemployees: '{{Staff}}', city: '{{City}}', description: 'Imported' };
  await runTool(hubspotSync, rows, { object: 'companies', key: '{{Domain}}', fields }, live(hs));
  expect(properties(hs, 'companies')).toEqual([
    { name: 'Initech (via enrichment)', numberofemployees: '120', description: 'Imported', domain: 'initech.test' },
  ]);
  const record = [...(hs.records.companies?.values() ?? [])][0];
  if (record) record.properties.city = 'Austin';
  await runTool(hubspotSync, rows, { object: 'companies', key: '{{Domain}}', fields }, live(hs));
  expect(properties(hs, 'companies')[0]?.city).toBe('Austin');
  await runTool(hubspotSync, rows, { object: 'companies', key: '{{Domain}}', fields, clear_empty: true }, live(hs));
  expect(properties(hs, 'companies')[0]?.city).toBe('');
});

test('rows sharing a domain in one run make one company, even while HubSpot search has not indexed it yet', async () => {
  const hs = fake({ searchLagMs: 60_000 });
  const rows = ['Ada', 'Grace', 'Linus'].map((First) => ({ First, Domain: 'hooli.test' }));
  const out = await runTool(hubspotSync, rows, { object: 'companies', key: '{{Domain}}', fields: { name: 'Hooli' } }, live(hs));
  expect(out.map((r) => (r as { value: { action: string } }).value.action).sort()).toEqual(['created', 'updated', 'updated']);
  expect(new Set(out.map((r) => (r as { value: { id: string } }).value.id)).size).toBe(1);
  expect(hs.records.companies?.size).toBe(1);
});

test('a company whose domain was entered with www. is found by search and updated, its domain kept', async () => {
  const hs = fake();
  const config = { object: 'companies' as const, key: '{{D}}', fields: { industry: '{{I}}' } };
  const [made] = await runTool(hubspotSync, [{ D: 'umbrella.test', I: 'Pharma' }], config, live(hs));
  for (const r of hs.records.companies?.values() ?? []) r.properties.domain = 'www.umbrella.test';
  const [again] = await runTool(hubspotSync, [{ D: 'umbrella.test', I: 'Biotech' }], config, live(hs));
  expect(again).toEqual({ status: 'ok', value: { ...(made as { value: object }).value, action: 'updated' } });
  expect(properties(hs, 'companies')).toEqual([{ domain: 'www.umbrella.test', industry: 'Biotech' }]);
});

test('two companies with the domain in HubSpot: that row says to merge them; other rows go on', async () => {
  const hs = fake();
  await runTool(hubspotSync, [{ D: 'a.test' }, { D: 'b.test' }], { object: 'companies', key: '{{D}}' }, live(hs));
  for (const r of hs.records.companies?.values() ?? []) r.properties.domain = 'dup.test';
  const out = await runTool(hubspotSync, [{ D: 'dup.test' }, { D: 'c.test' }], { object: 'companies', key: '{{D}}' }, live(hs));
  expect(out[0]).toEqual({
    status: 'error',
    error: expect.stringContaining('2 companies in HubSpot have the domain dup.test'),
    retryable: false,
  });
  expect(out[1]).toMatchObject({ status: 'ok', value: { action: 'created' } });
});

test('a 429 with Retry-After is waited out, then the request succeeds', async () => {
  const hs = fake({ limit: { max: 3, windowMs: 1000 } });
  const rows = ['ada', 'grace', 'linus', 'alan'].map((n) => ({ Email: `${n}@acme.test` }));
  const out = await runTool(hubspotSync, rows, { object: 'contacts', key: '{{Email}}' }, live(hs));
  expect(out.every((r) => r.status === 'ok')).toBe(true);
  expect(hs.records.contacts?.size).toBe(4);
  const throttled = hs.log.filter((l) => l.status === 429);
  expect(throttled.length).toBeGreaterThan(0);
  for (const t of throttled) {
    // The same call again, after the 1 s the fake asked for (timers never fire early; 5 ms for clock rounding).
    const retry = hs.log.find((l) => l.call === t.call && l.at > t.at && l.status === 200);
    expect(retry && retry.at - t.at).toBeGreaterThanOrEqual(995);
  }
});

test('a 429 without Retry-After is waited out by X-HubSpot-RateLimit-Interval-Milliseconds', async () => {
  const hs = fake({ limit: { max: 1, windowMs: 700, retryAfter: false } });
  const out = await runTool(hubspotSync, [{ Email: 'ada@acme.test' }], { object: 'contacts', key: '{{Email}}' }, live(hs));
  expect(out).toEqual([{ status: 'ok', value: expect.objectContaining({ action: 'created' }) }]);
  const [t] = hs.log.filter((l) => l.status === 429);
  expect(t).toBeDefined();
  expect((hs.log.at(-1)?.at ?? 0) - (t?.at ?? 0)).toBeGreaterThanOrEqual(695);
});

test('a throttle longer than a row should wait goes back to the host as a retryable error', async () => {
  const hs = fake({ limit: { max: 1, windowMs: 60_000 } });
  const out = await runTool(hubspotSync, [{ Email: 'ada@acme.test' }], { object: 'contacts', key: '{{Email}}' }, live(hs));
  // With the wait HubSpot asked for, which the host waits out before the retry (SDK 1.4).
  expect(out).toEqual([
    { status: 'error', error: expect.stringContaining('HubSpot answered HTTP 429'), retryable: true, retryAfterMs: expect.any(Number) },
  ]);
  expect((out[0] as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(10_000);
  expect(hs.log.filter((l) => l.status === 429)).toHaveLength(1);
});

test('no token: every row says which variable to set; a refused token says so without echoing it', async () => {
  const hs = fake();
  const rows = [{ Email: 'ada@acme.test' }, { Email: 'grace@acme.test' }];
  const config = { object: 'contacts' as const, key: '{{Email}}' };
  expect(await runTool(hubspotSync, rows, config, live(hs, { token: undefined }))).toEqual(
    rows.map(() => ({
      status: 'error',
      error: 'HUBSPOT_ACCESS_TOKEN is not set; set it or run with PROVIDER_MODE=sandbox',
      retryable: false,
    })),
  );
  const refused = await runTool(hubspotSync, rows, config, live(hs, { token: 'pat-na1-wrong-token-0000' }));
  for (const r of refused) {
    expect(r).toEqual({
      status: 'error',
      error: expect.stringContaining('HubSpot refused HUBSPOT_ACCESS_TOKEN (HTTP 401'),
      retryable: false,
    });
    expect(JSON.stringify(r)).not.toContain('wrong-token');
  }
  expect(hs.records.contacts?.size).toBe(0);
});

test('a mapped property HubSpot does not have fails the rows with HubSpot’s message', async () => {
  const hs = fake();
  const rows = [{ Domain: 'acme.test' }, { Domain: 'globex.test' }];
  const out = await runTool(hubspotSync, rows, { object: 'companies', key: '{{Domain}}', fields: { favorite_color: 'blue' } }, live(hs));
  for (const r of out)
    expect(r).toEqual({
      status: 'error',
      error: 'HubSpot refused the field mapping: Property values were not valid: Property "favorite_color" does not exist',
      retryable: false,
    });
  expect(hs.records.companies?.size).toBe(0);
});

test('sandbox: no request; the same key gives the same fake record, a re-run says updated', async () => {
  const config = { object: 'companies' as const, key: '{{Domain}}', fields: { name: '{{Name}}' } };
  const rows = [
    { Domain: 'sandbox-one.test', Name: 'One' },
    { Domain: 'https://www.sandbox-one.test', Name: 'Again' },
    { Domain: 'sandbox-two.test' },
  ];
  const out = await runTool(hubspotSync, rows, config, { providerMode: 'sandbox', env: {} });
  const values = out.map((r) => (r as { value: { id: string; url: string; action: string } }).value);
  expect(values[0]).toEqual({
    id: expect.stringMatching(/^\d{11}$/),
    url: expect.stringMatching(/^https:\/\/app\.hubspot\.example\.com\//),
    action: 'created',
  });
  expect(values[1]).toEqual({ ...values[0], action: 'updated' } as never);
  expect(values[2]?.id).not.toBe(values[0]?.id);
  const rerun = await runTool(hubspotSync, [rows[2] as never], config, { providerMode: 'sandbox', env: {} });
  expect(rerun).toEqual([{ status: 'ok', value: { ...values[2], action: 'updated' } }]);
});

test('rows without a key are skipped, a key that is not a domain or email is that row’s error, and the config is checked', async () => {
  const out = await runTool(
    hubspotSync,
    [{ D: '' }, { D: 'not a domain' }],
    { object: 'companies', key: '{{D}}' },
    { providerMode: 'sandbox' },
  );
  expect(out).toEqual([
    { status: 'skipped', reason: 'missing input: key' },
    { status: 'error', error: 'key "not a domain" is not a domain', retryable: false },
  ]);
  const run = (config: object) => runTool(hubspotSync, [], config as never, { providerMode: 'sandbox' });
  await expect(run({ object: 'companies', key: 'x', fields: { domain: 'y' } })).rejects.toThrow(
    'config.fields.domain domain is filled from key',
  );
  await expect(run({ object: 'contacts', key: 'x', id_property: 'wfs_domain' })).rejects.toThrow('config.id_property');
  await expect(run({ object: 'companies', key: 'x', id_property: 'domain' })).rejects.toThrow('domain is not a unique property');
  await expect(run({ object: 'deals', key: 'x' })).rejects.toThrow('config.object');
});
