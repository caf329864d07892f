import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import httpApi from '../../plugins/tools/http_api/index.ts';
import { DIALECTS } from '../support/databases.ts';
import { type FakeServer, startFakeServer } from '../support/fake-providers.ts';
import { runTool } from 'workflow-service/plugin-testing';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, runColumns, setEnv, SERVICE_START_MS } from './enrich-helpers.ts';

const TOKEN = 'api-token-789';
const COMPANIES: Record<string, { name: string; employees: number }> = {
  'acme.test': { name: 'Acme', employees: 120 },
  'globex.test': { name: 'Globex', employees: 4000 },
};

let api: FakeServer;
let restoreEnv: () => void;
beforeAll(() => {
  api = startFakeServer({
    'GET /companies': (r) => {
      if (r.headers.get('authorization') !== `Bearer ${TOKEN}`)
        return Response.json({ error: `bad token ${r.headers.get('authorization')}` }, { status: 400 });
      const company = COMPANIES[r.query.get('domain') ?? ''];
      return company ? Response.json({ data: company }) : Response.json({ error: 'no such company' }, { status: 404 });
    },
    'POST /score': (r) => Response.json({ score: r.body.employees * 2, echo: r.body }),
    'GET /text': () => new Response('plain words', { headers: { 'content-type': 'text/plain' } }),
    'GET /bad': () => Response.json({ error: 'bad request' }, { status: 400 }),
  });
  restoreEnv = setEnv({ ALLOW_PRIVATE_NETWORK: '1' });
});
afterAll(() => {
  restoreEnv();
  api.stop();
});

describe.each(DIALECTS)('http_api on %s', (dialect) => {
  let t: TestService;
  let pid: string;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live', JOB_MAX_ATTEMPTS: '2' });
    pid = await csvProject(t, 'Name,Domain,Employees\nAcme,acme.test,120\nGlobex & Co,globex.test,4000\nNobody,nobody.test,1\n');
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('GET with templated query and headers; extract picks the value with JSONata; 404 is no result', async () => {
    const col = await addColumn(t, pid, 'Staff', 'http_api', {
      url: `${api.url}/companies`,
      query: { domain: '{{Domain}}', empty: '' },
      headers: { Authorization: `Bearer ${TOKEN}` },
      extract: 'data.employees',
    });
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Staff')).toMatchObject({ status: 'completed', value: 120 });
    expect(cellOf(rows, 'Name', 'Globex & Co', 'Staff')).toMatchObject({ status: 'completed', value: 4000 });
    expect(cellOf(rows, 'Name', 'Nobody', 'Staff')).toMatchObject({ status: 'no_result' });
    const sent = api.requestsTo('/companies').find((r) => r.query.get('domain') === 'acme.test');
    expect([...(sent?.query.keys() ?? [])]).toEqual(['domain']); // empty values are left out
  });

  test('POST sends the rendered JSON body (a whole template keeps the cell as it is); $status is bound', async () => {
    const col = await addColumn(t, pid, 'Score', 'http_api', {
      method: 'POST',
      url: `${api.url}/score`,
      body: { company: '{{Name}}', employees: '{{Employees}}', note: 'about {{Name}}' },
      extract: '{"score": score, "status": $status}',
    });
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Score').value).toEqual({ score: 240, status: 200 });
    const sent = api.requestsTo('/score').find((r) => r.body.company === 'Globex & Co');
    // CSV cells are text, so "{{Employees}}" is the string "4000" (a number cell would stay a number).
    expect(sent?.body).toEqual({ company: 'Globex & Co', employees: '4000', note: 'about Globex & Co' });
    expect(sent?.headers.get('content-type')).toBe('application/json');
  });

  test('a text answer is kept as text; without extract the whole body is the value', async () => {
    const col = await addColumn(t, pid, 'Text', 'http_api', { url: `${api.url}/text?for={{Domain}}` });
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Text')).toMatchObject({ status: 'completed', value: 'plain words' });
  });

  test('a 4xx is that row’s error without the secrets it echoes; a failing extract is an error too', async () => {
    const col = await addColumn(t, pid, 'Denied', 'http_api', {
      url: `${api.url}/companies?domain={{Domain}}`,
      headers: { Authorization: 'Bearer wrong-token-secret' },
    });
    const bad = await addColumn(t, pid, 'BadExtract', 'http_api', {
      url: `${api.url}/text`,
      extract: '$number("x") + $undefinedFunction()',
    });
    const rows = await runColumns(t, pid, [col, bad]);
    const denied = cellOf(rows, 'Name', 'Acme', 'Denied');
    expect(denied.status).toBe('error');
    expect(denied.error).toContain('HTTP 400');
    expect(denied.error).not.toContain('wrong-token-secret');
    expect(cellOf(rows, 'Name', 'Acme', 'BadExtract')).toMatchObject({ status: 'error', error: expect.stringContaining('extract failed') });
  });

  test('an API that keeps answering 500 leaves the cells in error once the attempts are spent', async () => {
    const col = await addColumn(t, pid, 'Down', 'http_api', { url: `${api.url}/score`, method: 'POST', body: { x: 1 } });
    api.failNext('/score', 500, 100);
    try {
      const rows = await runColumns(t, pid, [col], 20_000);
      expect(cellOf(rows, 'Name', 'Acme', 'Down')).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 500') });
    } finally {
      api.clearFailures();
    }
  }, 25_000);

  test('private addresses are refused unless ALLOW_PRIVATE_NETWORK says otherwise', async () => {
    const restore = setEnv({ ALLOW_PRIVATE_NETWORK: undefined });
    try {
      const col = await addColumn(t, pid, 'Internal', 'http_api', { url: 'http://169.254.169.254/latest/meta-data/{{Domain}}' });
      const rows = await runColumns(t, pid, [col]);
      const cell = cellOf(rows, 'Name', 'Acme', 'Internal');
      expect(cell.status).toBe('error');
      expect(cell.error).toStartWith('refused: private or reserved address (169.254.169.254)');
      expect(cell.error).not.toContain('linkLocal');
    } finally {
      restore();
    }
  });

  test('row data that puts a line break into a header ends that row in error at once, sends nothing, and is not retried', async () => {
    const added = await t.api('POST', `/projects/${pid}/rows`, {
      body: { company: { Name: 'Evil\r\nX-Injected: yes', Domain: 'evil.test', Employees: '1' } },
    });
    expect(added.status).toBe(201);
    const before = api.requestsTo('/text').length;
    const col = await addColumn(t, pid, 'Tagged', 'http_api', { url: `${api.url}/text`, headers: { 'X-Company': '{{Name}}' } });
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Evil\r\nX-Injected: yes', 'Tagged')).toMatchObject({
      status: 'error',
      error: 'header X-Company contains a line break, which a header value cannot hold',
    });
    expect(cellOf(rows, 'Name', 'Acme', 'Tagged')).toMatchObject({ status: 'completed', value: 'plain words' });
    const sent = api.requestsTo('/text').slice(before);
    expect(sent.map((r) => r.headers.get('x-company')).sort()).toEqual(['Acme', 'Globex & Co', 'Nobody']);
    expect(sent.some((r) => r.headers.has('x-injected'))).toBe(false);
  });
});

describe('http_api: how failures are classed', () => {
  const call = (config: Record<string, unknown>) => runTool(httpApi, [{}], config as never, { providerMode: 'live' });

  test('429 is a retryable error, so the job is retried', async () => {
    api.failNext('/text', 429);
    expect(await call({ url: `${api.url}/text` })).toEqual([
      { status: 'error', error: expect.stringContaining('HTTP 429'), retryable: true },
    ]);
    expect(await call({ url: `${api.url}/text` })).toEqual([{ status: 'ok', value: 'plain words' }]);
  });

  test('a header value with a line break is that row’s permanent error, not a retried network failure', async () => {
    const rows = [{ Tag: 'a\r\nX-Injected: 1' }];
    expect(await runTool(httpApi, rows, { url: `${api.url}/text`, headers: { 'X-Tag': '{{Tag}}' } }, { providerMode: 'live' })).toEqual([
      { status: 'error', error: 'header X-Tag contains a line break, which a header value cannot hold', retryable: false },
    ]);
  });

  test('a URL that is not http(s) once the row is filled in is that row’s error', async () => {
    const rows = [{ Link: 'notaurl' }];
    expect(await runTool(httpApi, rows, { url: '{{Link}}' }, { providerMode: 'live' })).toEqual([
      { status: 'error', error: expect.stringContaining('not an http(s) URL'), retryable: false },
    ]);
  });
});
