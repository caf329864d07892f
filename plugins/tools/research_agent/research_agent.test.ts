import { afterAll, beforeAll, expect, test } from 'bun:test';
import { assertTool, rowCredits, runTool } from 'workflow-service/plugin-testing';
import researchAgent from './index.ts';
import { type ChatBody, callReply, html, type Loopback, offered, type Received, serve, toolMessages } from './loopback.test-support.ts';

const SCHEMA = {
  type: 'object',
  properties: {
    sells_to_healthcare: { type: 'boolean' },
    evidence: { type: 'string', minLength: 1 },
  },
  required: ['sells_to_healthcare', 'evidence'],
  additionalProperties: false,
};
const QUOTE = 'Acme Health builds scheduling software for hospitals and clinics.';
const ABOUT = `<!doctype html><html><head><title>About Acme Health</title><style>body{color:red}</style></head>
<body><nav>Home · Pricing</nav><script>var tracking = "not text";</script>
<h1>About us</h1><p>${QUOTE}</p><p>Founded in 2015.</p></body></html>`;

/** The model's next turn, from the request it was sent (each test scripts its own). */
let brain: (body: ChatBody) => Response;
let llm: Loopback;
let web: Loopback;
let privateSite: Loopback;
const previousAllow = process.env.ALLOW_PRIVATE_NETWORK;

beforeAll(() => {
  llm = serve({ '/v1/chat/completions': (r) => brain(r.body) });
  web = serve({
    '/acme/about': () => html(ABOUT),
    '/acme/pricing': () => html('<html><body><p>Plans from $99.</p></body></html>'),
    '/search': (r) =>
      Response.json({
        query: r.query.get('q'),
        number_of_results: 2,
        results: [
          { url: `${web.url}/acme/about`, title: 'About Acme Health', content: 'Scheduling software for hospitals.', engine: 'duckduckgo' },
          { url: `${web.url}/acme/pricing`, title: 'Pricing', content: 'Plans from $99.', engine: 'bing' },
        ],
      }),
    '/res/v1/web/search': () =>
      Response.json({
        type: 'search',
        web: {
          type: 'search',
          results: [{ title: 'About <strong>Acme</strong>', url: `${web.url}/acme/about`, description: 'For <strong>hospitals</strong>.' }],
        },
      }),
  });
  // A second loopback address: the SSRF guard lets tests open 127.0.0.1 only, so this one stays private.
  privateSite = serve({ '/secret': () => html('<p>internal admin page</p>') }, '127.0.0.2');
  process.env.ALLOW_PRIVATE_NETWORK = '127.0.0.1';
});
afterAll(() => {
  for (const s of [llm, web, privateSite]) s.stop();
  if (previousAllow === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
  else process.env.ALLOW_PRIVATE_NETWORK = previousAllow;
});

const env = (over: Record<string, string | undefined> = {}) => ({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${llm.url}/v1`,
  SEARXNG_URL: web.url,
  ...over,
});
const config = (over: Record<string, unknown> = {}) =>
  ({ question: 'Does {{Name}} ({{Website}}) sell to healthcare?', output_schema: SCHEMA, model: 'gpt-test', ...over }) as never;
const live = (cfg = config(), over: Record<string, string | undefined> = {}) =>
  runTool(researchAgent, [{ Name: 'Acme Health', Website: 'acme.com' }], cfg, { providerMode: 'live', env: env(over) });

const chatRequests = (since: number): Received[] => llm.received.slice(since);
const firstUrl = (text: string) => /https?:\/\/\S+/.exec(text)?.[0] as string;

/** A model that searches, reads the first result, and answers quoting the sentence about hospitals. */
function diligentModel(body: ChatBody): Response {
  const seen = toolMessages(body);
  if (seen.length === 0) return callReply('web_search', { query: 'Acme Health customers hospitals' });
  if (seen.length === 1) return callReply('read_page', { url: firstUrl(seen[0] as string) });
  const page = seen[1] as string;
  const url = /^URL: (\S+)/.exec(page)?.[1];
  const quote = page.split('\n').find((line) => line.includes('hospitals'));
  return callReply('answer', { answer: { sells_to_healthcare: true, evidence: quote }, sources: [{ url, quote }] });
}

test('its definition passes the registry checks', () => {
  expect(() => assertTool(researchAgent, 'tools/research_agent')).not.toThrow();
});

test('answers with its sources after a search and a page read', async () => {
  brain = diligentModel;
  const before = llm.received.length;
  const searches = web.received.filter((r) => r.path === '/search').length;
  const [out] = await live();
  expect(out).toEqual({
    status: 'ok',
    value: { answer: { sells_to_healthcare: true, evidence: QUOTE }, sources: [{ url: `${web.url}/acme/about`, quote: QUOTE }] },
    units: 3,
  });
  const sent = chatRequests(before);
  expect(sent.length).toBe(3);
  expect(sent[0]?.headers.get('authorization')).toBe('Bearer sk-test');
  expect(sent[0]?.body.model).toBe('gpt-test');
  expect(sent[0]?.body.messages[1]).toEqual({ role: 'user', content: 'Does Acme Health (acme.com) sell to healthcare?' });
  expect(offered(sent[0]?.body)).toEqual(['web_search', 'read_page', 'answer']);
  expect(sent[0]?.body.tool_choice).toBe('required');
  // The answer function's parameters are the user's schema beside the sources.
  expect(sent[0]?.body.tools?.[2]?.function.parameters.properties.answer).toEqual(SCHEMA);
  const search = web.received.filter((r) => r.path === '/search')[searches];
  expect([search?.query.get('q'), search?.query.get('format')]).toEqual(['Acme Health customers hospitals', 'json']);
  // The page reached the model as its visible text: no script, no style.
  const page = toolMessages(sent[2]?.body)[1] as string;
  expect(page).toContain(`Title: About Acme Health\n\nHome · Pricing\nAbout us\n${QUOTE}\nFounded in 2015.`);
  expect(page).not.toContain('tracking');
  expect(page).not.toContain('color:red');
});

test('each search or read is charged: the row reserves max_steps + 1 credits and keeps those it used', async () => {
  brain = diligentModel;
  const [out] = await live(config({ max_steps: 6 }));
  expect(rowCredits(researchAgent, config({ max_steps: 6 }), out as never)).toEqual({ reserved: 7, charged: 3 });
});

test('the estimate knows the budget: max_steps steps and the answer (default 6)', () => {
  const ok = { status: 'ok' as const, value: {} };
  expect(rowCredits(researchAgent, config({ max_steps: 20 }), ok).reserved).toBe(21);
  expect(rowCredits(researchAgent, config(), ok).reserved).toBe(7);
});

test('when the budget is spent the model may only answer, and must', async () => {
  // A model that would search for ever, and answers only when made to.
  brain = (body) =>
    offered(body).includes('web_search')
      ? callReply('web_search', { query: `acme page ${toolMessages(body).length}` })
      : callReply('answer', {
          answer: { sells_to_healthcare: true, evidence: 'A search result says so.' },
          sources: [{ url: firstUrl(toolMessages(body)[0] as string), quote: 'Scheduling software for hospitals.' }],
        });
  const before = llm.received.length;
  const searches = web.received.filter((r) => r.path === '/search').length;
  const [out] = await live(config({ max_steps: 2 }));
  expect(out).toMatchObject({ status: 'ok', value: { answer: { sells_to_healthcare: true } }, units: 3 });
  expect(web.received.filter((r) => r.path === '/search').length - searches).toBe(2);
  const last = chatRequests(before).at(-1)?.body;
  expect(offered(last)).toEqual(['answer']);
  expect(last?.tool_choice).toEqual({ type: 'function', function: { name: 'answer' } });
  expect(last?.messages.at(-1)).toEqual({ role: 'user', content: 'The 2 steps are spent. Call answer now with what you found.' });
  expect(rowCredits(researchAgent, config({ max_steps: 2 }), out as never)).toEqual({ reserved: 3, charged: 3 });
});

test('an answer that does not fit the schema is sent back once with what is wrong, then accepted', async () => {
  let refusal = '';
  brain = (body) => {
    const seen = toolMessages(body);
    if (seen.length === 0) return callReply('web_search', { query: 'acme' });
    if (seen.length === 1)
      return callReply('answer', {
        answer: { sells_to_healthcare: 'yes', evidence: 'It says so.' },
        sources: [{ url: 'https://made-up.example.org/page', quote: 'invented' }],
      });
    refusal = seen[1] as string;
    return callReply('answer', {
      answer: { sells_to_healthcare: true, evidence: 'It says so.' },
      sources: [{ url: firstUrl(seen[0] as string), quote: 'Scheduling software for hospitals.' }],
    });
  };
  const [out] = await live();
  expect(out).toMatchObject({ status: 'ok', value: { answer: { sells_to_healthcare: true } }, units: 2 });
  expect(refusal).toContain('/answer/sells_to_healthcare must be boolean');
  expect(refusal).toContain('Call answer again');
});

test('an answer that misses twice is the cell’s error, naming what did not fit', async () => {
  brain = (body) =>
    toolMessages(body).length === 0
      ? callReply('web_search', { query: 'acme' })
      : callReply('answer', { answer: { sells_to_healthcare: true, evidence: '', extra: 1 }, sources: [] });
  const before = llm.received.length;
  const [out] = await live();
  expect(out).toEqual({
    status: 'error',
    error:
      'the answer does not fit output_schema after one repair: /answer must NOT have additional properties ("extra"); /answer/evidence must NOT have fewer than 1 characters',
    retryable: false,
    units: 2,
  });
  expect(chatRequests(before).length).toBe(3); // the search, the answer, its one repair
});

test('a source the agent never saw is refused like a misfit', async () => {
  brain = () =>
    callReply('answer', {
      answer: { sells_to_healthcare: false, evidence: 'No.' },
      sources: [{ url: 'https://elsewhere.example.net/', quote: 'x' }],
    });
  const [out] = await live();
  expect(out).toMatchObject({
    status: 'error',
    error: expect.stringContaining('/sources/0/url https://elsewhere.example.net/ is not a page you read'),
  });
});

test('a page on a private address is not read (the SSRF guard): the model is told, the row goes on', async () => {
  const secret = `${privateSite.url}/secret`;
  brain = (body) => {
    const seen = toolMessages(body);
    if (seen.length === 0) return callReply('read_page', { url: secret });
    return callReply('answer', { answer: { sells_to_healthcare: false, evidence: 'Unknown.' }, sources: [] });
  };
  const before = llm.received.length;
  const [out] = await live();
  expect(out).toMatchObject({ status: 'ok', units: 2 });
  expect(toolMessages(chatRequests(before).at(-1)?.body)[0]).toContain(`Could not read ${secret}: refused: private or reserved address`);
  expect(privateSite.received.length).toBe(0);
});

test('Brave Search: its API shape and key header, snippets as plain text', async () => {
  let results = '';
  brain = (body) => {
    const seen = toolMessages(body);
    if (seen.length === 0) return callReply('web_search', { query: 'acme hospitals' });
    results = seen[0] as string;
    return callReply('answer', {
      answer: { sells_to_healthcare: true, evidence: 'For hospitals.' },
      sources: [{ url: firstUrl(results), quote: 'For hospitals.' }],
    });
  };
  const before = web.received.length;
  const [out] = await live(config(), { SEARXNG_URL: undefined, BRAVE_SEARCH_API_KEY: 'brave-key', BRAVE_SEARCH_BASE_URL: web.url });
  expect(out).toMatchObject({ status: 'ok' });
  const call = web.received.slice(before).find((r) => r.path === '/res/v1/web/search');
  expect(call?.headers.get('x-subscription-token')).toBe('brave-key');
  expect([call?.query.get('q'), call?.query.get('count')]).toEqual(['acme hospitals', '8']);
  expect(results).toBe(`1. About Acme\n${web.url}/acme/about\nFor hospitals.`);
});

test('live mode without a key or a search fails every row, naming what to set', async () => {
  expect(await live(config(), { OPENAI_API_KEY: undefined })).toEqual([
    { status: 'error', error: expect.stringContaining('OPENAI_API_KEY is not set'), retryable: false },
  ]);
  expect(await live(config(), { SEARXNG_URL: undefined })).toEqual([
    { status: 'error', error: expect.stringContaining('set SEARXNG_URL (a SearXNG instance) or BRAVE_SEARCH_API_KEY'), retryable: false },
  ]);
});

test('an output_schema that is not JSON Schema is refused when the column is made', async () => {
  const bad = config({ output_schema: { type: 'object', properties: { n: { type: 'integr' } } } });
  await expect(runTool(researchAgent, [{}], bad)).rejects.toThrow('config.output_schema is not a valid JSON Schema');
});

test('sandbox: the same question gives the same answer, fitting the schema, with a source under example.com', async () => {
  const rows = [
    { Name: 'Acme Health', Website: 'acme.com' },
    { Name: 'Acme Health', Website: 'acme.com' },
    { Name: 'Globex', Website: 'globex.io' },
  ];
  const before = llm.received.length;
  const [a, b, c] = await runTool(researchAgent, rows, config({ max_steps: 4 }), { providerMode: 'sandbox' });
  expect(a).toEqual(b as never);
  expect(a).toMatchObject({
    status: 'ok',
    value: {
      answer: { sells_to_healthcare: expect.any(Boolean), evidence: 'sandbox evidence' },
      sources: [{ url: 'https://acme.example.com/about', quote: expect.stringContaining('Sandbox') }],
    },
    units: 3,
  });
  expect(c).toMatchObject({ value: { sources: [{ url: 'https://globex.example.com/about' }] } });
  expect(rowCredits(researchAgent, config({ max_steps: 4 }), a as never)).toEqual({ reserved: 5, charged: 3 });
  expect(llm.received.length).toBe(before);
});
