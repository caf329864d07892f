import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { autoOrder, MIN_ATTEMPTS } from '../core/columns/auto-order.ts';
import type { ToolStats } from '../core/ports/storage.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

const figures = (toolId: string, attempts: number, found: number, credits: number): [string, ToolStats] => [
  toolId,
  { toolId, attempts, found, credits, latencyMs: attempts * 10, updatedAt: 0 },
];

describe('autoOrder', () => {
  const steps = [
    { tool_id: 'dear', config: {} },
    { tool_id: 'cheap', config: {} },
    { tool_id: 'free', config: {} },
  ];
  const ids = (m: Map<string, ToolStats>) => autoOrder(steps, m).map((s) => s.tool_id);

  test('steps without figures keep the listed order', () => {
    expect(ids(new Map())).toEqual(['dear', 'cheap', 'free']);
  });

  test('cheapest credits per result first; free tools before paid ones; a step that never finds anything last', () => {
    const m = new Map([figures('dear', 100, 30, 300), figures('cheap', 100, 60, 100), figures('free', 100, 5, 0)]);
    expect(ids(m)).toEqual(['free', 'cheap', 'dear']);
    const never = new Map([figures('dear', 100, 0, 300), figures('cheap', 100, 60, 100), figures('free', 100, 10, 0)]);
    expect(ids(never)).toEqual(['free', 'cheap', 'dear']);
    // Never found anything: last, whether free or paid per result (everything refunded: 0 credits).
    const refunded = new Map([figures('dear', 100, 0, 0), figures('cheap', 100, 60, 100), figures('free', 100, 0, 0)]);
    expect(ids(refunded)).toEqual(['cheap', 'dear', 'free']);
  });

  test('a step with thin figures, or far fewer attempts than the others, is explored first', () => {
    const thin = new Map([figures('dear', MIN_ATTEMPTS - 1, 5, 60), figures('cheap', 500, 300, 500), figures('free', 500, 10, 0)]);
    expect(ids(thin)[0]).toBe('dear');
    const starved = new Map([figures('dear', 40, 12, 120), figures('cheap', 500, 300, 500), figures('free', 500, 10, 0)]);
    expect(ids(starved)).toEqual(['dear', 'free', 'cheap']);
  });
});

/**
 * Self-tuning waterfalls (docs/enrichment.md): each step's figures are recorded per workspace and tool
 * (GET /tools/{tool_id}/stats); with order "auto" a waterfall listed dear-first learns to try the
 * cheaper step first, and the credits per found result drop.
 */
describe.each(DIALECTS)('order "auto" on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, MCP_PORT: '0' });
  });
  afterAll(() => t.stop());

  test('converges to the cheapest order per result, and the credits per found result drop', async () => {
    const ws = await t.newWorkspace('pro', 100_000);
    const as = { headers: { 'service-api-key': ws.key } };
    const names = Array.from({ length: 250 }, (_, i) => `Firm ${i + 1}`).join('\n');
    const made = await t.api('POST', '/projects', { ...as, body: { builder_id: 'manual_list_builder', form_data: { companies: names } } });
    const projectId = made.body.project_id;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as);
    // Listed dear-first: 3 credits an attempt for a 30 % hit rate (10 per result) before 1 credit for 60 % (1.7 per result).
    const col = await t.api('POST', `/projects/${projectId}/columns`, {
      ...as,
      body: {
        name: 'Email',
        order: 'auto',
        waterfall: [
          { tool_id: 'odds_dear', config: { key: '{{Name}}', hit_percent: 30 } },
          { tool_id: 'odds_cheap', config: { key: '{{Name}}', hit_percent: 60 } },
        ],
      },
    });
    expect(col.status).toBe(201);
    expect(col.body.order).toBe('auto');
    const rowIds: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const r = await t.api('GET', `/projects/${projectId}/rows?page=${page}&page_size=100`, as);
      rowIds.push(...r.body.rows.map((row: any) => row.id));
    }
    expect(rowIds).toHaveLength(250);

    // Five rounds of 50 rows: what each round spent per value found.
    const perResult: number[] = [];
    for (let round = 0; round < 5; round++) {
      const chunk = rowIds.slice(round * 50, round * 50 + 50);
      const before = await t.service.kernel.storage.credits.balance(ws.workspaceId);
      const run = await t.api('POST', `/projects/${projectId}/columns/run`, { ...as, body: { row_ids: chunk } });
      expect(run.body.queued).toBe(50);
      await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as);
      const spent = before - (await t.service.kernel.storage.credits.balance(ws.workspaceId));
      const inChunk = new Set(chunk);
      let found = 0;
      for (let page = 1; page <= 3; page++) {
        const r = await t.api('GET', `/projects/${projectId}/rows?page=${page}&page_size=100`, as);
        for (const row of r.body.rows) if (inChunk.has(row.id) && row.company.Email.status === 'completed') found++;
      }
      perResult.push(spent / found);
    }
    // Round 1 tries the steps as listed (no figures yet): about 3.7 credits a row for 0.72 found.
    expect(perResult[0]).toBeGreaterThan(4.2);
    // Then cheap-first: about 2.2 credits a row for the same hit rate.
    for (const later of perResult.slice(2)) expect(later).toBeLessThan((perResult[0] as number) * 0.75);

    const stats = async (tool: string) => (await t.api('GET', `/tools/${tool}/stats`, as)).body;
    const cheap = await stats('odds_cheap');
    const dear = await stats('odds_dear');
    expect(cheap.credits_per_result).toBeLessThan(dear.credits_per_result);
    expect(cheap.hit_rate).toBeGreaterThan(0.5);
    expect(cheap.hit_rate).toBeLessThan(0.7);
    expect(dear.hit_rate).toBeGreaterThan(0.2);
    expect(dear.hit_rate).toBeLessThan(0.4);
    // Every paid attempt is counted: the two tools' credits are what the workspace spent.
    const spentTotal = 100_000 - (await t.service.kernel.storage.credits.balance(ws.workspaceId));
    expect(cheap.credits + dear.credits).toBe(spentTotal);
    expect(cheap.avg_latency_ms).toBeGreaterThanOrEqual(0);

    // The same figures through MCP; another workspace has none, and an unknown tool is a 404.
    const client = await connect(t.service.mcpUrl as string, { 'service-api-key': ws.key });
    try {
      expect(await call(client, 'get_tool_stats', { tool_id: 'odds_cheap' })).toMatchObject({ ok: true, data: cheap });
    } finally {
      await client.close();
    }
    const other = await t.api('GET', '/tools/odds_cheap/stats');
    expect(other.body).toMatchObject({ attempts: 0, hit_rate: null, credits_per_result: null });
    expect((await t.api('GET', '/tools/no_such_tool/stats')).status).toBe(404);
  });

  test('order "auto" needs a waterfall: on a single tool it is a 422', async () => {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'A' } } });
    await t.api('GET', `/projects/${made.body.project_id}/wait?wait_seconds=20`);
    const r = await t.api('POST', `/projects/${made.body.project_id}/columns`, {
      body: { name: 'X', tool_id: 'odds_cheap', config: { key: '{{Name}}', hit_percent: 50 }, order: 'auto' },
    });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body.detail)).toContain('order');
  });
});
