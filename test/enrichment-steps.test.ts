import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { columnSteps } from '../core/columns/column-steps.ts';
import type { Expressions } from '../core/expressions/expression-pool.ts';
import { applyRunCondition } from '../core/handlers/enrichment/apply-condition.ts';
import { classifyResults } from '../core/handlers/enrichment/classify-results.ts';
import type { EnrichBatch, OpenRow, ReadyRow, Settled } from '../core/columns/enrich-batch.ts';
import { prepareStep } from '../core/handlers/enrichment/prepare-step.ts';
import { sortByDependencies } from '../core/handlers/enrichment/sort-rows.ts';
import type { Cell, Column, StoredRow } from '../core/model.ts';
import { type AnyTool, defineTool } from '../core/plugins/plugin-types.ts';
import { cellOf, csvProject, SERVICE_START_MS, settledRows } from './plugins/enrich-helpers.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const tool = (over: Partial<AnyTool> = {}): AnyTool =>
  defineTool({
    kind: 'tool',
    id: 'lookup',
    version: '1',
    name: 'Lookup',
    description: 'test',
    category: 'test',
    tags: [],
    legacyIds: [],
    input: Type.Object({ domain: Type.String() }),
    requires: ['domain'],
    produces: [{ field: 'value', description: '' }],
    cost: { credits: 2, per: 'result' },
    batchSize: 10,
    enrich: async () => [],
    ...over,
  } as AnyTool);

const column = (over: Partial<Column> = {}): Column =>
  ({
    no: 3,
    id: 'col-3',
    name: 'Found',
    type: 'tool',
    toolId: 'lookup',
    config: { domain: '{{Domain}}' },
    autoRun: false,
    runCondition: null,
    waterfall: null,
    maxCreditsPerRow: null,
    position: 3,
    ...over,
  }) as Column;

const row = (seq: number, cells: Record<number, Cell>): StoredRow => ({ seq, cells }) as StoredRow;
const open = (seq: number, values: Record<string, unknown>): OpenRow => ({ row: row(seq, {}), values });

describe('enrichment host steps', () => {
  test('columnSteps: a single tool is one step with its config; a waterfall is its steps', () => {
    expect(columnSteps(column())).toEqual([{ tool_id: 'lookup', config: { domain: '{{Domain}}' } }]);
    const waterfall = [
      { tool_id: 'a', config: {} },
      { tool_id: 'b', config: { x: 1 } },
    ];
    expect(columnSteps(column({ waterfall }))).toBe(waterfall);
  });

  test('sortByDependencies: a row whose config reads an unsettled tool column waits', () => {
    const domain = column({ no: 2, id: 'col-2', name: 'Domain', toolId: 'domain_normalizer', config: { value: '{{Website}}' } });
    const website = { no: 1, id: 'col-1', name: 'Website', type: 'input' } as Column;
    const found = column();
    const batch = {
      columns: [website, domain, found],
      column: found,
      rows: [row(1, { 1: { v: 'a.com' }, 2: { v: 'a.com', s: 'completed' } }), row(2, { 1: { v: 'b.com' }, 2: { v: null, s: 'running' } })],
    } as unknown as EnrichBatch;
    const { open: ready, waiting } = sortByDependencies(batch);
    expect(waiting).toEqual([2]);
    expect(ready.map((o) => o.values)).toEqual([{ Website: 'a.com', Domain: 'a.com', Found: null }]);
  });

  test('applyRunCondition: false or failed conditions skip with the reason; true ones stay open', async () => {
    const expressions: Expressions = {
      evaluate: async () => ({ ok: true, value: true }),
      evaluateMany: async (_e, inputs) =>
        inputs.map((i) =>
          (i as { n: number }).n === 2 ? { ok: false, error: 'expression ran over 1 s' } : { ok: true, value: (i as { n: number }).n > 0 },
        ),
    };
    const settled: Settled = new Map();
    const left = await applyRunCondition(expressions, 'n > 0', [open(1, { n: 1 }), open(2, { n: 2 }), open(3, { n: 0 })], settled);
    expect(left.map((o) => o.row.seq)).toEqual([1]);
    expect(settled.get(2)).toEqual({ v: null, s: 'skipped', e: 'run condition failed: expression ran over 1 s' });
    expect(settled.get(3)).toEqual({ v: null, s: 'skipped', e: 'run condition is false: n > 0' });
  });

  test('prepareStep: renders the config; a missing input passes on to the next step, and is skipped at the last', () => {
    const step = { tool_id: 'lookup', config: { domain: '{{Domain}}' } };
    const rows = [open(1, { Domain: 'acme.com' }), open(2, { Domain: null })];
    const settled: Settled = new Map();
    const first = prepareStep(
      { jobId: 'j1', stepIndex: 0, isLast: false, step, tool: tool(), maxCreditsPerRow: null, spent: new Map() },
      rows,
      settled,
    );
    expect(first.ready.map((r) => [r.item.config, r.chargeKey])).toEqual([[{ domain: 'acme.com' }, 'enrich:j1:1:0']]);
    expect(first.passOn.map((o) => o.row.seq)).toEqual([2]);
    expect(settled.size).toBe(0);
    const last = prepareStep(
      { jobId: 'j1', stepIndex: 1, isLast: true, step, tool: tool(), maxCreditsPerRow: null, spent: new Map() },
      rows,
      settled,
    );
    expect(last.passOn).toEqual([]);
    expect(settled.get(2)).toEqual({ v: null, s: 'skipped', e: 'missing input: domain' });
  });

  test('prepareStep: a row whose spend would pass the per-row cap ends no_result', () => {
    const settled: Settled = new Map();
    const plan = prepareStep(
      {
        jobId: 'j',
        stepIndex: 1,
        isLast: true,
        step: { tool_id: 'lookup', config: { domain: 'x.com' } },
        tool: tool(),
        maxCreditsPerRow: 3,
        spent: new Map([[1, 2]]),
      },
      [open(1, {}), open(2, {})],
      settled,
    );
    expect(plan.ready.map((r) => r.row.seq)).toEqual([2]);
    expect(settled.get(1)).toEqual({ v: null, s: 'no_result', e: 'stopped at the credit cap of 3 per row' });
  });

  test('classifyResults: found, retried, refunded, settled or handed to the next step', () => {
    const ready = [1, 2, 3, 4, 5].map(
      (seq) => ({ ...open(seq, {}), item: { rowId: String(seq), config: {}, row: {} }, chargeKey: `k${seq}` }) as ReadyRow,
    );
    const results = [
      { status: 'ok' as const, value: 'found' },
      { status: 'error' as const, error: '503 from provider', retryable: true },
      { status: 'no_result' as const, reason: 'nothing' },
      { status: 'error' as const, error: '400 bad', retryable: false },
      { status: 'ok' as const, value: '' },
    ];
    const isValid = (v: unknown) => v !== '';
    const mid = new Map<number, Cell>();
    const a = classifyResults(
      { tool: tool({ isValid }), config: {}, isLast: false, lastAttempt: false, cacheKeys: new Map([[1, 'c1']]) },
      ready,
      results,
      mid,
    );
    expect(mid.get(1)).toEqual({ v: 'found', s: 'completed' });
    expect(a.toCache).toEqual([{ key: 'c1', value: 'found' }]);
    expect(a.retry.map((r) => r.row.seq)).toEqual([2]);
    expect(a.lastError).toBe('503 from provider');
    expect(a.next.map((r) => r.row.seq)).toEqual([3, 4, 5]);
    expect(a.refund.map((r) => [r.row.row.seq, r.credits])).toEqual([
      [3, 2],
      [4, 2],
      [5, 2],
    ]); // paid per result: nothing found, credit back

    const last = new Map<number, Cell>();
    const b = classifyResults(
      { tool: tool({ isValid }), config: {}, isLast: true, lastAttempt: true, cacheKeys: new Map() },
      ready,
      results,
      last,
    );
    expect(b.retry).toEqual([]);
    expect(last.get(2)).toEqual({ v: null, s: 'error', e: '503 from provider' });
    expect(last.get(3)).toEqual({ v: null, s: 'no_result', e: 'nothing' });
    expect(last.get(4)).toEqual({ v: null, s: 'error', e: '400 bad' });
    expect(last.get(5)).toEqual({ v: null, s: 'no_result' });
    expect(b.refund.map((r) => r.row.row.seq)).toEqual([2, 3, 4, 5]);
  });

  test('classifyResults: the retry waits the longest Retry-After its rows were given', () => {
    const ready = [1, 2, 3].map(
      (seq) => ({ ...open(seq, {}), item: { rowId: String(seq), config: {}, row: {} }, chargeKey: `k${seq}` }) as ReadyRow,
    );
    const results = [
      { status: 'error' as const, error: '429', retryable: true, retryAfterMs: 2000 },
      { status: 'error' as const, error: '503', retryable: true },
      { status: 'error' as const, error: '429', retryable: true, retryAfterMs: 5000 },
    ];
    const step = { tool: tool({}), config: {}, isLast: true, cacheKeys: new Map() };
    expect(classifyResults({ ...step, lastAttempt: false }, ready, results, new Map()).retryAfterMs).toBe(5000);
    expect(
      classifyResults({ ...step, lastAttempt: false }, ready, [results[1], results[1], results[1]] as never, new Map()).retryAfterMs,
    ).toBe(0);
    // The last attempt settles the rows: nothing waits.
    expect(classifyResults({ ...step, lastAttempt: true }, ready, results, new Map()).retryAfterMs).toBe(0);
  });

  test('classifyResults: a tool priced per unit gives back the units a settled row did not use', () => {
    const perUnit = tool({
      cost: { credits: 2, per: 'attempt' },
      input: Type.Object({ domain: Type.String(), budget: Type.Integer() }),
      costUnits: (c: { budget: number }) => c.budget + 1,
    } as Partial<AnyTool>);
    const ready = [1, 2, 3, 4].map(
      (seq) => ({ ...open(seq, {}), item: { rowId: String(seq), config: {}, row: {} }, chargeKey: `k${seq}` }) as ReadyRow,
    );
    const results = [
      { status: 'ok' as const, value: 'found', units: 3 },
      { status: 'error' as const, error: 'the answer does not fit', retryable: false, units: 5 },
      { status: 'error' as const, error: '503', retryable: true, units: 2 },
      { status: 'error' as const, error: 'key refused', retryable: false },
    ];
    const out = classifyResults(
      { tool: perUnit, config: { budget: 4 }, isLast: true, lastAttempt: false, cacheKeys: new Map() },
      ready,
      results,
      new Map(),
    );
    // 5 units (10 credits) charged each: 3 used → 4 back; all 5 used → none; retried → kept for the retry; unsaid → one used.
    expect(out.refund.map((r) => [r.row.row.seq, r.credits])).toEqual([
      [1, 4],
      [4, 8],
    ]);
  });
});

describe.each(DIALECTS)('a waterfall on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('a row missing the first step’s input is tried by the next step, not left running', async () => {
    const pid = await csvProject(t, 'Name,Nick\nAcme,ACM\nGlobex,');
    const r = await t.api('POST', `/projects/${pid}/columns`, {
      body: {
        name: 'Label',
        waterfall: [
          { tool_id: 'formula', config: { expression: '{{Nick}}' } },
          { tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
        ],
      },
    });
    expect(r.status).toBe(201);
    expect((await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [r.body.col_id] } })).status).toBe(200);
    const rows = await settledRows(t, pid);
    // Acme: step 1 evaluates the expression "ACM" (a path that finds nothing in the row) → step 2.
    expect(cellOf(rows, 'Name', 'Acme', 'Label')).toMatchObject({ status: 'completed', value: 'ACME' });
    expect(cellOf(rows, 'Name', 'Globex', 'Label')).toMatchObject({ status: 'completed', value: 'GLOBEX' });
  });
});
