import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { HUNTER_TEST_KEY, startFakeHunter } from '../../plugins/_providers/hunter/fake-hunter.ts';
import type { LoopbackProvider } from '../../plugins/_providers/loopback-provider.ts';
import { PDL_TEST_KEY, startFakePdl } from '../../plugins/_providers/pdl/fake-pdl.ts';
import { startFakeZeroBounce, ZEROBOUNCE_TEST_KEY } from '../../plugins/_providers/zerobounce/fake-zerobounce.ts';
import { data, startMcpTestService } from '../mcp/mcp-support.ts';
import { DIALECTS } from '../support/databases.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, SERVICE_START_MS, setEnv, settledRows } from './enrich-helpers.ts';

/**
 * The provider tools in a real service, against loopback servers speaking Hunter's, People Data
 * Labs' and ZeroBounce's APIs: an email waterfall that stops at the first valid address and charges
 * only the steps that ran, and the verifier shipped as an npm package named in PLUGINS.
 */

const finding = (first: string, last: string, domain: string, email: string, score: number) => ({
  first_name: first,
  last_name: last,
  domain,
  email,
  score,
  sources: [],
  verification: { date: '2026-02-01', status: 'valid' },
});
const pdlPerson = (first: string, last: string, domain: string, email: string | null) => ({
  id: `pdl-${first}`,
  full_name: `${first} ${last}`,
  first_name: first,
  last_name: last,
  job_title: 'Engineer',
  job_company_name: domain.split('.')[0],
  job_company_website: domain,
  work_email: email,
  likelihood: 8,
});

let hunter: LoopbackProvider;
let pdl: LoopbackProvider;
let zerobounce: LoopbackProvider;
let restoreEnv: () => void;
beforeAll(() => {
  hunter = startFakeHunter([
    finding('Ada', 'Lovelace', 'acme.test', 'ada@acme.test', 96),
    finding('Ken', 'Thompson', 'umbrella.test', 'ken@umbrella.test', 41),
    finding('Barbara', 'Liskov', 'hooli.test', 'barbara@hooli.test', 90),
  ]);
  pdl = startFakePdl({
    people: [
      pdlPerson('Ada', 'Lovelace', 'acme.test', 'ada.l@acme.test'),
      pdlPerson('Grace', 'Hopper', 'globex.test', 'grace@globex.test'),
      pdlPerson('Ken', 'Thompson', 'umbrella.test', null),
    ],
  });
  zerobounce = startFakeZeroBounce({
    'alan.turing@initech.test': { status: 'valid' },
    'ada@acme.test': { status: 'valid' },
    'grace@globex.test': { status: 'valid' },
  });
  restoreEnv = setEnv({
    HUNTER_API_KEY: HUNTER_TEST_KEY,
    HUNTER_BASE_URL: hunter.url,
    PDL_API_KEY: PDL_TEST_KEY,
    PDL_BASE_URL: pdl.url,
    ZEROBOUNCE_API_KEY: ZEROBOUNCE_TEST_KEY,
    ZEROBOUNCE_BASE_URL: zerobounce.url,
    ALLOW_PRIVATE_NETWORK: '1',
  });
});
afterAll(() => {
  restoreEnv();
  for (const p of [hunter, pdl, zerobounce]) p.stop();
});

/** Finder → enrichment → verifier: each step's own rule says when its answer is good enough to stop. */
const WATERFALL = [
  { tool_id: 'hunter_email_finder', config: { first_name: '{{First}}', last_name: '{{Last}}', domain: '{{Domain}}', min_score: 70 } },
  {
    tool_id: 'pdl_person_enrich',
    config: { first_name: '{{First}}', last_name: '{{Last}}', company: '{{Domain}}', required: 'work_email' },
  },
  { tool_id: 'zerobounce_email_verifier', config: { email: '{{First}}.{{Last}}@{{Domain}}', accept: ['valid'] } },
];

const balance = async (t: TestService) => (await t.api('GET', '/credits')).body.balance as number;
/** Requests each provider received for these people (by first name), since `from` requests. */
const asked = (p: LoopbackProvider, from: number) =>
  p.sent
    .slice(from)
    .map((r) => r.query.get('first_name') ?? r.query.get('email')?.split('.')[0])
    .map((n) => n?.toLowerCase())
    .sort();

describe.each(DIALECTS)('an email waterfall over Hunter, People Data Labs and ZeroBounce on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live', JOB_MAX_ATTEMPTS: '3' });
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('each row ends with the first valid address, and pays only for the steps that ran', async () => {
    const pid = await csvProject(
      t,
      'First,Last,Domain\nAda,Lovelace,acme.test\nGrace,Hopper,globex.test\nAlan,Turing,initech.test\nKen,Thompson,umbrella.test\n',
    );
    const created = await t.api('POST', `/projects/${pid}/columns`, { body: { name: 'Work Email', waterfall: WATERFALL } });
    expect(created.status).toBe(201);
    // The waterfall is read by the field all three produce.
    expect(created.body.primary_field).toBe('email');
    const [h, p, z] = [hunter.sent.length, pdl.sent.length, zerobounce.sent.length];
    const before = await balance(t);
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [created.body.col_id] } });
    await settledRows(t, pid);
    const rows = (await t.api('GET', `/projects/${pid}/rows?include=meta`)).body.rows;
    const cell = (first: string) => cellOf(rows, 'First', first, 'Work Email') as { status: string; value: any; error?: string; meta: any };

    expect(cell('Ada')).toMatchObject({ status: 'completed', value: { email: 'ada@acme.test', score: 96 } });
    expect(cell('Ada').meta).toMatchObject({ tool_id: 'hunter_email_finder', provider: 'hunter', credits: 1 });
    // Hunter's guess for Grace is unknown; PDL has her work email.
    expect(cell('Grace')).toMatchObject({ status: 'completed', value: { email: 'grace@globex.test', title: 'Engineer' } });
    expect(cell('Grace').meta).toMatchObject({ tool_id: 'pdl_person_enrich', credits: 2 });
    // Neither knows Alan: the verifier checks the guessed address and finds it valid.
    expect(cell('Alan')).toMatchObject({ status: 'completed', value: { status: 'valid', email: 'alan.turing@initech.test' } });
    expect(cell('Alan').meta).toMatchObject({ tool_id: 'zerobounce_email_verifier', credits: 1 });
    // Hunter's 41 is under min_score, PDL's Ken has no work email, and the guess bounces: nothing valid.
    expect(cell('Ken')).toMatchObject({ status: 'no_result', error: 'ZeroBounce says invalid (mailbox_not_found)' });

    // Hunter asked for everyone; PDL only after Hunter; ZeroBounce only after both.
    expect(asked(hunter, h)).toEqual(['ada', 'alan', 'grace', 'ken']);
    expect(asked(pdl, p)).toEqual(['alan', 'grace', 'ken']);
    expect(asked(zerobounce, z)).toEqual(['alan', 'ken']);
    // Paid: Hunter for Ada (1), PDL for Grace (2), ZeroBounce for Alan and Ken (1 each); Hunter's and PDL's misses are refunded.
    expect(before - (await balance(t))).toBe(5);

    // The export writes each row's address, whichever step found it.
    const csv = (await t.api('GET', `/projects/${pid}/export.csv`)).body as string;
    expect(parse(csv, { columns: true }).map((r: any) => r['Work Email'])).toEqual([
      'ada@acme.test',
      'grace@globex.test',
      'alan.turing@initech.test',
      '',
    ]);
  });

  test('a 429 with Retry-After is retried by the job; the row completes and is charged once', async () => {
    const pid = await csvProject(t, 'First,Last,Domain\nBarbara,Liskov,hooli.test\n');
    const col = await addColumn(t, pid, 'Work Email', 'hunter_email_finder', WATERFALL[0]?.config);
    const before = await balance(t);
    const h = hunter.sent.length;
    hunter.failNext({
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { errors: [{ id: 'too_many_requests', code: 429, details: 'Slow down' }] },
    });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col] } });
    const rows = await settledRows(t, pid, 30_000);
    expect(cellOf(rows, 'First', 'Barbara', 'Work Email')).toMatchObject({ status: 'completed', value: { email: 'barbara@hooli.test' } });
    expect(hunter.sent.length - h).toBe(2);
    expect(before - (await balance(t))).toBe(1);
  }, 40_000);
});

/**
 * The verifier column gets a job from each finder column it reads (and one of its own) for the same
 * cells; one job holds a cell at a time, so each address is checked and charged once on both
 * databases (test/one-job-per-cell.test.ts pins the interleavings).
 */
describe.each(DIALECTS)('a verifier column over finder columns, on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live' });
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('a verifier waterfall over two finder columns checks each finder’s address in turn, once', async () => {
    const pid = await csvProject(t, 'First,Last,Domain\nAda,Lovelace,acme.test\nGrace,Hopper,globex.test\nKen,Thompson,umbrella.test\n');
    await addColumn(t, pid, 'Hunter Email', 'hunter_email_finder', {
      first_name: '{{First}}',
      last_name: '{{Last}}',
      domain: '{{Domain}}',
    });
    const names = { first_name: '{{First}}', last_name: '{{Last}}', company: '{{Domain}}', required: 'work_email' };
    await addColumn(t, pid, 'PDL Person', 'pdl_person_enrich', names);
    const verified = await t.api('POST', `/projects/${pid}/columns`, {
      body: {
        name: 'Verified Email',
        waterfall: [
          { tool_id: 'zerobounce_email_verifier', config: { email: '{{Hunter Email}}', accept: ['valid'] } },
          { tool_id: 'zerobounce_email_verifier', config: { email: '{{PDL Person}}', accept: ['valid'] } },
        ],
      },
    });
    expect(verified.status).toBe(201);
    const z = zerobounce.sent.length;
    const before = await balance(t);
    // One run: the verifier column waits for the two finder columns it reads.
    await t.api('POST', `/projects/${pid}/columns/run`, { body: {} });
    const rows = await settledRows(t, pid, 30_000);
    const cell = (first: string) => cellOf(rows, 'First', first, 'Verified Email');
    expect(cell('Ada')).toMatchObject({ status: 'completed', value: { status: 'valid', email: 'ada@acme.test' } });
    // Hunter has nothing for Grace: the first step passes her on, the second checks PDL's address.
    expect(cell('Grace')).toMatchObject({ status: 'completed', value: { status: 'valid', email: 'grace@globex.test' } });
    // Hunter's address for Ken bounces and PDL has no work email for him: nothing left to check.
    expect(cell('Ken')).toMatchObject({ status: 'skipped', error: 'missing input: email' });
    expect(
      zerobounce.sent
        .slice(z)
        .map((r) => r.query.get('email'))
        .sort(),
    ).toEqual(['ada@acme.test', 'grace@globex.test', 'ken@umbrella.test']);
    // Hunter: Ada and Ken (1 each); PDL: Ada and Grace (2 each); ZeroBounce: three checks (1 each).
    expect(before - (await balance(t))).toBe(9);
  }, 40_000);
});

test(
  'the provider tools are in GET /tools, its search and MCP’s list_tools and create_column, with no kernel change',
  async () => {
    const ids = ['hunter_email_finder', 'pdl_person_enrich', 'pdl_company_enrich', 'zerobounce_email_verifier'];
    const t = await startMcpTestService('sqlite');
    try {
      const catalog = (await t.api('GET', '/tools')).body.filter((x: any) => ids.includes(x.tool_id));
      expect(catalog.map((x: any) => x.tool_id).sort()).toEqual([...ids].sort());
      for (const tool of catalog) expect(tool).toMatchObject({ summary: expect.any(String), config_schema: { type: 'object' } });
      const found = (await t.api('GET', '/tools/search?q=email%20waterfall')).body.map((x: any) => x.tool_id);
      expect(found).toEqual(expect.arrayContaining(['hunter_email_finder', 'zerobounce_email_verifier']));
      const client = await t.client();
      expect((await data(client, 'list_tools')).map((x: any) => x.tool_id)).toEqual(expect.arrayContaining(ids));
      const createColumn = (await client.listTools()).tools.find((x) => x.name === 'create_column');
      for (const id of ids) expect(JSON.stringify(createColumn?.inputSchema)).toContain(id);
    } finally {
      await t.stop();
    }
  },
  SERVICE_START_MS,
);

describe('the verifier shipped as an npm package and named in PLUGINS', () => {
  let dir: string;
  let t: TestService;
  beforeAll(async () => {
    // What a publisher ships: package.json and one built module importing only workflow-service/plugin-sdk
    // (a peer dependency), in a folder with no node_modules anywhere above it.
    dir = mkdtempSync(join(tmpdir(), 'wfs-zerobounce-package-'));
    const pkg = join(dir, 'wfs-plugin-zerobounce');
    mkdirSync(pkg);
    // A service takes each id once, and this one bundles the verifier already: the package ships it as its own tool.
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      `import verifier from '${resolve(import.meta.dir, '../../plugins/tools/zerobounce_email_verifier/index.ts')}';\n` +
        `export default { ...verifier, id: 'acme_email_verifier', name: 'Email verifier (Acme, ZeroBounce)' };\n`,
    );
    const built = await Bun.build({ entrypoints: [entry], outdir: join(pkg, 'dist'), target: 'bun', external: ['workflow-service/*'] });
    expect(built.success).toBe(true);
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({
        name: 'wfs-plugin-zerobounce',
        version: '1.0.0',
        type: 'module',
        main: 'dist/entry.js',
        peerDependencies: { 'workflow-service': '>=0.1.0' },
      }),
    );
    rmSync(entry);
    t = await startTestService('sqlite', { PROVIDER_MODE: 'live', PLUGINS: pkg });
  }, SERVICE_START_MS);
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('it is in the catalog with its config schema and checks addresses against the provider', async () => {
    const built = await Bun.file(join(dir, 'wfs-plugin-zerobounce/dist/entry.js')).text();
    expect(built.match(/from "([^"]+)"/g)?.every((s) => s === 'from "workflow-service/plugin-sdk"')).toBe(true);
    const tool = (await t.api('GET', '/tools')).body.find((x: any) => x.tool_id === 'acme_email_verifier');
    expect(tool).toMatchObject({ name: 'Email verifier (Acme, ZeroBounce)', config_schema: { required: ['email'] } });
    const pid = await csvProject(t, 'Email\nada@acme.test\nnobody@acme.test\n');
    const col = await addColumn(t, pid, 'Check', 'acme_email_verifier', { email: '{{Email}}', accept: ['valid'] });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col] } });
    const rows = await settledRows(t, pid);
    expect(cellOf(rows, 'Email', 'ada@acme.test', 'Check')).toMatchObject({ status: 'completed', value: { status: 'valid' } });
    expect(cellOf(rows, 'Email', 'nobody@acme.test', 'Check')).toMatchObject({
      status: 'no_result',
      error: 'ZeroBounce says invalid (mailbox_not_found)',
    });
  });
});
