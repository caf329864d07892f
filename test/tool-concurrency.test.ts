import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { loadConfig } from '../core/config.ts';
import { runTool } from '../core/handlers/enrichment/run-tool.ts';
import { assertTool, PluginDefinitionError } from '../core/plugins/definition-checks.ts';
import type { AnyTool, EnrichResult, ToolContext } from '../core/plugins/plugin-types.ts';
import { ProviderError } from '../core/plugins/provider-http.ts';
import { runTool as runInHarness } from '../sdk/plugin-testing/index.ts';

/**
 * Per-row tools (`enrichOne`): the host owns their concurrency and their provider budget
 * (docs/plugins.md) — at most `concurrency` rows in flight, one rate token per row, so a provider's
 * `rateLimit.perSecond` counts its requests; a thrown error stops the rows not yet started.
 */

const limits = loadConfig({}).limits;
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ rowId: String(i + 1), config: { n: i }, row: {} }));
const live: ToolContext = {
  providerMode: 'live',
  env: () => undefined,
  signal: new AbortController().signal,
  log: () => {},
  expressions: undefined as never,
};

function tool(over: Partial<AnyTool>): AnyTool {
  return {
    kind: 'tool',
    id: 'per_row',
    version: '1.0.0',
    name: 'Per row',
    description: 'One request per row.',
    category: 'test',
    tags: [],
    legacyIds: [],
    input: Type.Object({ n: Type.Number() }),
    requires: [],
    produces: [{ field: 'n', description: 'n' }],
    cost: { credits: 0, per: 'attempt' },
    batchSize: 10,
    provider: { id: 'per-row-provider', requiredEnv: [], rateLimit: { perSecond: 1000 } },
    ...over,
  } as AnyTool;
}

/** A budget that counts the tokens taken. */
function countingBudget() {
  const taken: string[] = [];
  return {
    taken,
    deps: { rateLimiter: { acquire: async (key: string) => void taken.push(key), pause: async () => {} }, config: { limits } },
  };
}

describe('per-row tools run with the host’s concurrency and budget', () => {
  test('at most `concurrency` rows are in flight, and every row gets its own answer in order', async () => {
    let inFlight = 0;
    let most = 0;
    const perRow = tool({
      concurrency: 3,
      async enrichOne(item) {
        inFlight++;
        most = Math.max(most, inFlight);
        await Bun.sleep(10);
        inFlight--;
        return { status: 'ok', value: (item.config as { n: number }).n * 2 };
      },
    });
    const { deps } = countingBudget();
    const results = await runTool(deps, perRow, items(12), live);
    expect(most).toBe(3);
    expect(results).toEqual(items(12).map((_, i) => ({ status: 'ok', value: i * 2 })));
  });

  test('one rate token per row for a per-row tool, one per batch for a batch tool', async () => {
    const one = countingBudget();
    await runTool(one.deps, tool({ enrichOne: async () => ({ status: 'ok', value: 1 }) }), items(25), live);
    expect(one.taken).toEqual(Array(25).fill('provider:per-row-provider'));

    const batch = countingBudget();
    const batched = tool({ enrich: async (rows) => rows.map(() => ({ status: 'ok', value: 1 }) as EnrichResult) });
    await runTool(batch.deps, batched, items(25), live);
    expect(batch.taken.length).toBe(3); // batches of 10: 10, 10, 5

    const sandbox = countingBudget();
    await runTool(sandbox.deps, tool({ enrichOne: async () => ({ status: 'ok', value: 1 }) }), items(5), {
      ...live,
      providerMode: 'sandbox',
    });
    expect(sandbox.taken).toEqual([]); // sandbox calls nobody
  });

  test('a thrown error stops the rows not yet started: they and the failing one take it; answered rows keep theirs', async () => {
    const started: number[] = [];
    const failing = tool({
      concurrency: 1,
      async enrichOne(item) {
        const n = (item.config as { n: number }).n;
        started.push(n);
        if (n === 2) throw Object.assign(new Error('provider answered 503'), { retryable: true });
        return { status: 'ok', value: n };
      },
    });
    const results = await runTool(countingBudget().deps, failing, items(6), live);
    expect(started).toEqual([0, 1, 2]);
    expect(results.slice(0, 2)).toEqual([
      { status: 'ok', value: 0 },
      { status: 'ok', value: 1 },
    ]);
    for (const r of results.slice(2)) expect(r).toEqual({ status: 'error', error: 'provider answered 503', retryable: true });
  });

  test('a provider’s Retry-After: the rows a thrown error stopped carry it, and the provider’s budget is paused that long (capped)', async () => {
    const paused: [string, number][] = [];
    const deps = {
      rateLimiter: { acquire: async () => {}, pause: async (key: string, _rule: unknown, ms: number) => void paused.push([key, ms]) },
      config: { limits, queue: { maxRetryDelayMs: 5000 } },
    };
    const throttled = tool({
      concurrency: 1,
      async enrichOne(item) {
        const n = (item.config as { n: number }).n;
        if (n === 1) throw new ProviderError('provider answered HTTP 429', 429, true, 2000);
        return { status: 'ok', value: n };
      },
    });
    const results = await runTool(deps, throttled, items(3), live);
    expect(results[0]).toEqual({ status: 'ok', value: 0 });
    for (const r of results.slice(1))
      expect(r).toEqual({ status: 'error', error: 'provider answered HTTP 429', retryable: true, retryAfterMs: 2000 });
    expect(paused).toEqual([['provider:per-row-provider', 2000]]);

    // A batch tool's result may carry it too (SDK 1.4); a wait past JOB_MAX_RETRY_DELAY_MS pauses only that long.
    paused.length = 0;
    const batch = tool({
      enrich: async (rows) =>
        rows.map(() => ({ status: 'error', error: 'busy', retryable: true, retryAfterMs: 3_600_000 }) as EnrichResult),
    });
    expect((await runTool(deps, batch, items(2), live))[0]).toMatchObject({ retryAfterMs: 3_600_000 });
    expect(paused).toEqual([
      ['provider:per-row-provider', 5000],
      ['provider:per-row-provider', 5000],
    ]);

    // A tool without a rateLimit has no budget to pause; its rows still carry the wait for their retry.
    paused.length = 0;
    const unbudgeted = { ...throttled, provider: { id: 'free', requiredEnv: [] } } as AnyTool;
    expect((await runTool(deps, unbudgeted, items(2), live))[1]).toMatchObject({ retryAfterMs: 2000 });
    expect(paused).toEqual([]);
  });

  test('the plugin-testing harness runs the same host step: per-row tools work there unchanged', async () => {
    const perRow = tool({ concurrency: 2, enrichOne: async (item) => ({ status: 'ok', value: (item.config as { n: number }).n + 1 }) });
    const outcomes = await runInHarness(perRow, [{ x: 1 }, { x: 2 }, { x: 3 }], { n: 4 } as never, { providerMode: 'live' });
    expect(outcomes).toEqual([
      { status: 'ok', value: 5 },
      { status: 'ok', value: 5 },
      { status: 'ok', value: 5 },
    ]);
  });

  test('a tool defines enrich or enrichOne, not both and not neither; concurrency is 1 to 100', () => {
    const both = tool({ enrich: async () => [], enrichOne: async () => ({ status: 'no_result' }) });
    expect(() => assertTool(both, 'both')).toThrow(PluginDefinitionError);
    expect(() => assertTool(tool({}), 'neither')).toThrow('define enrich(items, ctx) or enrichOne(item, ctx)');
    expect(() => assertTool(tool({ enrichOne: async () => ({ status: 'no_result' }), concurrency: 0 }), 'zero')).toThrow('concurrency');
    expect(() => assertTool(tool({ enrichOne: async () => ({ status: 'no_result' }), concurrency: 8 }), 'eight')).not.toThrow();
  });
});
