import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import aiPrompt from '../../plugins/tools/ai_prompt/index.ts';
import { DIALECTS } from '../support/databases.ts';
import { type FakeServer, fakeOpenAI, OPENAI_KEY } from '../support/fake-providers.ts';
import { runTool } from 'workflow-service/plugin-testing';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, runColumns, setEnv, SERVICE_START_MS } from './enrich-helpers.ts';

const SCHEMA = {
  type: 'object',
  properties: { b2b: { type: 'boolean' }, segment: { type: 'string', enum: ['smb', 'enterprise'] } },
  required: ['b2b', 'segment'],
  additionalProperties: false,
};

let openai: FakeServer;
let restoreEnv: () => void;
beforeAll(() => {
  openai = fakeOpenAI((body) => {
    const user = body.messages.at(-1).content as string;
    if (user.includes('broken json')) return '{"b2b": tru';
    if (body.response_format) return JSON.stringify({ b2b: user.includes('Acme'), segment: 'enterprise' });
    return `Answer to: ${user}`;
  });
  restoreEnv = setEnv({ OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: OPENAI_KEY, ALLOW_PRIVATE_NETWORK: '1' });
});
afterAll(() => {
  restoreEnv();
  openai.stop();
});

describe.each(DIALECTS)('ai_prompt on %s', (dialect) => {
  let t: TestService;
  let pid: string;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live', JOB_MAX_ATTEMPTS: '2' });
    pid = await csvProject(t, 'Name,Website\nAcme,acme.test\nGlobex,globex.test\n');
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('sends the prompt rendered over the row as an OpenAI chat completion and keeps the answer', async () => {
    const col = await addColumn(t, pid, 'Pitch', 'ai_prompt', {
      model: 'gpt-test',
      system: 'Be brief.',
      prompt: 'What does {{Name}} ({{Website}}) sell?',
      temperature: 0,
      max_tokens: 50,
    });
    const before = openai.requests.length;
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Pitch')).toMatchObject({
      status: 'completed',
      value: 'Answer to: What does Acme (acme.test) sell?',
    });
    expect(cellOf(rows, 'Name', 'Globex', 'Pitch').value).toBe('Answer to: What does Globex (globex.test) sell?');
    const sent = openai.requests.slice(before);
    expect(sent.length).toBe(2);
    expect(sent[0]?.path).toBe('/v1/chat/completions');
    expect(sent[0]?.headers.get('authorization')).toBe(`Bearer ${OPENAI_KEY}`);
    expect(sent.find((r) => r.body.messages[1].content.includes('Acme'))?.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What does Acme (acme.test) sell?' },
      ],
      temperature: 0,
      max_completion_tokens: 50,
    });
  });

  test('with json_schema the request asks for structured output and the cell holds the object', async () => {
    const col = await addColumn(t, pid, 'Segment', 'ai_prompt', {
      model: 'gpt-test',
      prompt: 'Classify {{Name}}',
      json_schema: SCHEMA,
      schema_name: 'segment',
    });
    const before = openai.requests.length;
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Segment')).toMatchObject({ status: 'completed', value: { b2b: true, segment: 'enterprise' } });
    expect(cellOf(rows, 'Name', 'Globex', 'Segment').value).toEqual({ b2b: false, segment: 'enterprise' });
    expect(openai.requests[before]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'segment', schema: SCHEMA, strict: true },
    });
  });

  test('an answer that is not the JSON asked for is that row’s error', async () => {
    const col = await addColumn(t, pid, 'Broken', 'ai_prompt', { model: 'gpt-test', prompt: '{{Name}}: broken json', json_schema: SCHEMA });
    const rows = await runColumns(t, pid, [col]);
    expect(cellOf(rows, 'Name', 'Acme', 'Broken')).toMatchObject({
      status: 'error',
      error: expect.stringContaining('not the JSON the schema asks for'),
    });
  });

  test('a provider that keeps answering 500 leaves the cells in error once the attempts are spent', async () => {
    const col = await addColumn(t, pid, 'Down', 'ai_prompt', { model: 'gpt-test', prompt: 'Hi {{Name}}' });
    openai.failNext('/v1/chat/completions', 500, 100);
    try {
      const rows = await runColumns(t, pid, [col], 20_000);
      expect(cellOf(rows, 'Name', 'Acme', 'Down')).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 500') });
    } finally {
      openai.clearFailures();
    }
  }, 25_000);

  test('live mode without OPENAI_API_KEY: the cells are in error naming the variable', async () => {
    const restore = setEnv({ OPENAI_API_KEY: undefined });
    try {
      const col = await addColumn(t, pid, 'NoKey', 'ai_prompt', { model: 'gpt-test', prompt: 'Hello {{Name}}' });
      const rows = await runColumns(t, pid, [col]);
      expect(cellOf(rows, 'Name', 'Acme', 'NoKey')).toMatchObject({ status: 'error', error: expect.stringContaining('OPENAI_API_KEY') });
    } finally {
      restore();
    }
  });

  test('a wrong key is an error that does not repeat the key, even when the provider echoes it', async () => {
    const restore = setEnv({ OPENAI_API_KEY: 'sk-wrong-key-that-must-not-leak' });
    try {
      const col = await addColumn(t, pid, 'WrongKey', 'ai_prompt', { model: 'gpt-test', prompt: 'Hey {{Name}}' });
      const rows = await runColumns(t, pid, [col]);
      const cell = cellOf(rows, 'Name', 'Acme', 'WrongKey');
      // (Plain assertions: toMatchObject with an asymmetric matcher would overwrite cell.error.)
      expect(cell.status).toBe('error');
      expect(cell.error).toContain('HTTP 401');
      expect(cell.error).not.toContain('sk-wrong-key-that-must-not-leak');
    } finally {
      restore();
    }
  });
});

describe('ai_prompt: how failures are classed', () => {
  const run = (config: Record<string, unknown>, rows = 1) =>
    runTool(
      aiPrompt,
      Array.from({ length: rows }, () => ({})),
      { model: 'gpt-test', prompt: 'x', ...config } as never,
      { providerMode: 'live' },
    );

  test('429 is a retryable error (the job is retried); an unknown model fails the whole batch for good', async () => {
    openai.failNext('/v1/chat/completions', 429);
    expect(await run({})).toEqual([{ status: 'error', error: expect.stringContaining('HTTP 429'), retryable: true }]);
    const missing = { status: 'error' as const, error: expect.stringContaining('HTTP 404'), retryable: false };
    expect(await run({ model: 'missing-model' }, 2)).toEqual([missing, missing]);
  });

  test('the cache key changes with anything that changes the answer', () => {
    const key = (config: Record<string, unknown>) =>
      aiPrompt.cacheKey?.({ rowId: '1', config: { model: 'm', prompt: 'p', ...config } as never, row: {} });
    expect(key({})).toBe(key({}));
    expect(key({ prompt: 'q' })).not.toBe(key({}));
    expect(key({ model: 'n' })).not.toBe(key({}));
    expect(key({ json_schema: SCHEMA })).not.toBe(key({}));
  });
});
