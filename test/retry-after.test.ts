import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addColumn, cellOf, csvProject, SERVICE_START_MS, setEnv, settledRows } from './plugins/enrich-helpers.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

/**
 * A provider's Retry-After is waited out (docs/enrichment.md, "Retry-After"): a loopback provider
 * answers the first request for each key with 429 and `Retry-After: 2`, then 200. A tool column and a
 * builder calling it through the SDK's providerJson (which throws a retryable ProviderError carrying
 * `retryAfterMs`) are retried no sooner than 2 s after the 429 — the test service's own backoff is
 * 50 ms — then complete, charged once; on SQLite with the in-process queue, and on MariaDB + Redis.
 */

const RETRY_AFTER_S = 2;

/** The provider: per key, the times (ms, its own clock) of the requests it answered. */
function startThrottledProvider() {
  const calls = new Map<string, number[]>();
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const url = new URL(req.url);
      const key = url.searchParams.get('key') ?? '';
      const times = calls.get(key) ?? [];
      calls.set(key, times);
      times.push(performance.now());
      if (times.length === 1) {
        return Response.json({ error: 'rate limited' }, { status: 429, headers: { 'Retry-After': String(RETRY_AFTER_S) } });
      }
      if (url.pathname === '/page') return Response.json({ names: ['Ada', 'Grace', 'Barbara'].map((n) => `${n} ${key}`) });
      return Response.json({ answer: `found ${key}` });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, calls, stop: () => server.stop(true) };
}

const TOOL = `import { defineTool, providerJson, Type } from 'workflow-service/plugin-sdk';

export default defineTool({
  kind: 'tool',
  id: 'throttled_lookup',
  version: '1.0.0',
  sdk: '^1.1',
  name: 'Throttled lookup (test)',
  description: 'Test tool: asks THROTTLED_BASE_URL/lookup for the key. 1 credit per attempt.',
  category: 'test',
  tags: ['test'],
  legacyIds: [],
  input: Type.Object({ key: Type.String() }, { additionalProperties: false }),
  requires: ['key'],
  produces: [{ field: 'answer', description: 'The answer.' }],
  provider: { id: 'throttled', requiredEnv: [], optionalEnv: ['THROTTLED_BASE_URL'], rateLimit: { perSecond: 20, burst: 5 } },
  cost: { credits: 1, per: 'attempt' },
  batchSize: 10,
  async enrichOne(item, ctx) {
    const url = \`\${ctx.env('THROTTLED_BASE_URL')}/lookup?key=\${encodeURIComponent(item.config.key)}\`;
    const data = (await providerJson(ctx, url, {})) as { answer: string };
    return { status: 'ok', value: data.answer };
  },
});
`;

const BUILDER = `import { defineBuilder, providerJson, Type } from 'workflow-service/plugin-sdk';

export default defineBuilder({
  kind: 'builder',
  id: 'throttled_builder',
  version: '1.0.0',
  name: 'Throttled builder (test)',
  description: 'Test builder: one page of names from THROTTLED_BASE_URL/page. 1 credit per row.',
  category: 'test',
  tags: ['test'],
  legacyIds: [],
  input: Type.Object({ key: Type.String() }, { additionalProperties: false }),
  provider: { id: 'throttled_pages', requiredEnv: [], optionalEnv: ['THROTTLED_BASE_URL'], rateLimit: { perSecond: 20, burst: 5 } },
  cost: { credits: 1, per: 'row' },
  maxRows: 10,
  columns: () => ['Name'],
  projectName: (form) => \`Throttled \${form.key}\`,
  target: () => 3,
  async *run(form, ctx) {
    const url = \`\${ctx.env('THROTTLED_BASE_URL')}/page?key=\${encodeURIComponent(form.key)}\`;
    const data = (await providerJson(ctx, url, {})) as { names: string[] };
    yield data.names.map((Name) => ({ Name }));
  },
});
`;

let provider: ReturnType<typeof startThrottledProvider>;
let pluginsDir: string;
let restoreEnv: () => void;
beforeAll(() => {
  provider = startThrottledProvider();
  pluginsDir = mkdtempSync(join(tmpdir(), 'wfs-retry-after-'));
  mkdirSync(join(pluginsDir, 'tools/throttled_lookup'), { recursive: true });
  mkdirSync(join(pluginsDir, 'builders/throttled_builder'), { recursive: true });
  writeFileSync(join(pluginsDir, 'tools/throttled_lookup/index.ts'), TOOL);
  writeFileSync(join(pluginsDir, 'builders/throttled_builder/index.ts'), BUILDER);
  restoreEnv = setEnv({ ALLOW_PRIVATE_NETWORK: '1', THROTTLED_BASE_URL: provider.url });
});
afterAll(() => {
  restoreEnv();
  provider.stop();
  rmSync(pluginsDir, { recursive: true, force: true });
});

const balance = async (t: TestService) => (await t.api('GET', '/credits')).body.balance as number;

/** Each key's two requests: the 429, then the retry at least Retry-After later (and not absurdly later). */
function expectWaitedOut(keys: string[]): void {
  for (const key of keys) {
    const times = provider.calls.get(key) ?? [];
    expect({ key, requests: times.length }).toEqual({ key, requests: 2 });
    const gap = (times[1] as number) - (times[0] as number);
    expect(gap).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000);
    expect(gap).toBeLessThan(RETRY_AFTER_S * 1000 * 1.2 + 3000); // its spread, plus a slow machine
  }
}

describe.each(DIALECTS)('a provider’s Retry-After on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live', PLUGINS_DIR: pluginsDir });
  }, SERVICE_START_MS);
  afterAll(() => t?.stop());

  test('a tool column’s 429 with Retry-After: 2 is retried no sooner than 2 s later; each cell completes, charged once', async () => {
    const keys = ['ada', 'grace', 'barbara'].map((k) => `${dialect}-${k}`);
    const pid = await csvProject(t, `Key\n${keys.join('\n')}\n`);
    const col = await addColumn(t, pid, 'Answer', 'throttled_lookup', { key: '{{Key}}' });
    const before = await balance(t);
    expect((await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col] } })).status).toBe(200);
    const rows = await settledRows(t, pid, 30_000);
    for (const key of keys) expect(cellOf(rows, 'Key', key, 'Answer')).toMatchObject({ status: 'completed', value: `found ${key}` });
    expectWaitedOut(keys);
    expect(before - (await balance(t))).toBe(keys.length);
  }, 40_000);

  test('a builder’s 429 with Retry-After: 2 is retried no sooner than 2 s later; the run completes, its rows charged once', async () => {
    const key = `${dialect}-builder`;
    const before = await balance(t);
    const r = await t.api('POST', '/projects', { body: { builder_id: 'throttled_builder', form_data: { key } } });
    expect(r.status).toBe(201);
    const project = await waitForBuilder(t, r.body.project_id, 30_000);
    expect(project.builder_status.type).toBe('completed');
    expectWaitedOut([key]);
    const rows = (await t.api('GET', `/projects/${r.body.project_id}/rows?page_size=10`)).body.rows;
    expect(rows.map((row: any) => row.company.Name.value).sort()).toEqual([`Ada ${key}`, `Barbara ${key}`, `Grace ${key}`]);
    expect(before - (await balance(t))).toBe(3);
  }, 40_000);
});
