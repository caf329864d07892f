import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/**
 * Estimates (docs/enrichment.md): what a builder run or a column run would cost, told before anything runs,
 * with run conditions and the workspace's cache applied as the run applies them. Checked against
 * what the run then charges.
 */
describe.each(DIALECTS)('estimates on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, MCP_PORT: '0' });
  });
  afterAll(() => t.stop());

  async function workspaceWithRows(names: string[], credits = 10_000) {
    const ws = await t.newWorkspace('pro', credits);
    const as = { headers: { 'service-api-key': ws.key } };
    const made = await t.api('POST', '/projects', {
      ...as,
      body: { builder_id: 'manual_list_builder', form_data: { companies: names.join('\n') } },
    });
    const projectId = made.body.project_id as string;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as);
    const addColumn = async (body: Record<string, unknown>) =>
      (await t.api('POST', `/projects/${projectId}/columns`, { ...as, body })).body.col_id as string;
    const estimate = (body: Record<string, unknown>) => t.api('POST', `/projects/${projectId}/columns/estimate`, { ...as, body });
    /** Runs, waits, and answers what the run charged. */
    const runAndCharge = async (body: Record<string, unknown>) => {
      const before = await t.service.kernel.storage.credits.balance(ws.workspaceId);
      await t.api('POST', `/projects/${projectId}/columns/run`, { ...as, body });
      await t.api('GET', `/projects/${projectId}/wait?wait_seconds=30`, as);
      return before - (await t.service.kernel.storage.credits.balance(ws.workspaceId));
    };
    return { ws, as, projectId, addColumn, estimate, runAndCharge };
  }

  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`);

  test('attempt-priced: the estimate is the charge, run conditions count as free; nothing is run or charged to estimate', async () => {
    const p = await workspaceWithRows(names('Attempt', 12));
    const col = await p.addColumn({
      name: 'Lookup',
      tool_id: 'attempt_lookup',
      config: { key: '{{Name}}', answer: 'x' },
      run_condition: '$not($contains(Name, "Attempt 1"))', // false for Attempt 1, 10, 11, 12
    });
    const balance = await t.service.kernel.storage.credits.balance(p.ws.workspaceId);
    const est = await p.estimate({ col_ids: [col] });
    expect(est.status).toBe(200);
    expect(est.body).toEqual({ cells: 12, credits_max: 8, credits_expected: 8, balance, balance_after: balance - 8 });
    // Estimating ran nothing.
    const rows = await t.api('GET', `/projects/${p.projectId}/rows?page_size=20`, p.as);
    expect(rows.body.rows.every((r: any) => r.company.Lookup.status === 'pending')).toBe(true);
    expect(await t.service.kernel.storage.credits.balance(p.ws.workspaceId)).toBe(balance);
    expect(await p.runAndCharge({ col_ids: [col] })).toBe(est.body.credits_max);
    // Nothing pending is left: the default mode estimates nothing.
    expect((await p.estimate({ col_ids: [col] })).body).toMatchObject({ cells: 0, credits_max: 0, credits_expected: 0 });
  });

  test('a cached re-run is estimated free, and is free', async () => {
    const p = await workspaceWithRows(names('Cached', 6));
    const col = await p.addColumn({ name: 'Lookup', tool_id: 'paid_lookup', config: { key: '{{Name}}', answer: 'mail {{Name}}' } });
    const first = await p.estimate({ col_ids: [col] });
    expect(first.body).toMatchObject({ cells: 6, credits_max: 12 });
    expect(await p.runAndCharge({ col_ids: [col] })).toBe(12);
    const again = await p.estimate({ col_ids: [col], mode: 'all' });
    expect(again.body).toMatchObject({ cells: 6, credits_max: 0, credits_expected: 0 });
    expect(await p.runAndCharge({ col_ids: [col], mode: 'all' })).toBe(0);
  });

  test('per-result: expected within 10 % of the charge once the workspace has figures for the tool', async () => {
    const seed = await workspaceWithRows(names('Seed', 200));
    const seedCol = await seed.addColumn({ name: 'Email', tool_id: 'odds_found', config: { key: '{{Name}}', hit_percent: 40 } });
    await seed.runAndCharge({ col_ids: [seedCol] });
    // A second project of the same workspace, other names: the same tool, estimated from the figures above.
    const made = await t.api('POST', '/projects', {
      ...seed.as,
      body: { builder_id: 'manual_list_builder', form_data: { companies: names('Fresh', 200).join('\n') } },
    });
    const projectId = made.body.project_id;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, seed.as);
    const col = await t.api('POST', `/projects/${projectId}/columns`, {
      ...seed.as,
      body: { name: 'Email', tool_id: 'odds_found', config: { key: '{{Name}}', hit_percent: 40 } },
    });
    const est = await t.api('POST', `/projects/${projectId}/columns/estimate`, { ...seed.as, body: {} });
    expect(est.body).toMatchObject({ cells: 200, credits_max: 400 });
    const before = await t.service.kernel.storage.credits.balance(seed.ws.workspaceId);
    await t.api('POST', `/projects/${projectId}/columns/run`, { ...seed.as, body: { col_ids: [col.body.col_id] } });
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=30`, seed.as);
    const actual = before - (await t.service.kernel.storage.credits.balance(seed.ws.workspaceId));
    expect(actual).toBeGreaterThan(0);
    expect(Math.abs(est.body.credits_expected - actual) / actual).toBeLessThan(0.1);
  });

  test('a waterfall: max charges every step, expected weighs the later steps by what the earlier ones miss', async () => {
    const p = await workspaceWithRows(names('Fall', 10));
    const col = await p.addColumn({
      name: 'Email',
      waterfall: [
        { tool_id: 'attempt_lookup', config: { key: '{{Name}}' } }, // finds nothing: 1 credit per attempt
        { tool_id: 'paid_lookup', config: { key: '{{Name}}', answer: 'mail' } },
      ],
    });
    const est = await p.estimate({ col_ids: [col] });
    expect(est.body).toMatchObject({ cells: 10, credits_max: 30 });
    expect(est.body.credits_expected).toBeGreaterThanOrEqual(10);
    expect(est.body.credits_expected).toBeLessThanOrEqual(30);
    // The first step finds nothing here, so every row takes both: the most is what it charges.
    expect(await p.runAndCharge({ col_ids: [col] })).toBe(30);
  });

  test('a per-row cap ends the cell where the run ends it: the estimate is the charge', async () => {
    const p = await workspaceWithRows(names('Capped', 4));
    const col = await p.addColumn({
      name: 'Email',
      max_credits_per_row: 2,
      waterfall: [
        { tool_id: 'attempt_lookup', config: { key: '{{Name}}' } }, // 1 credit, finds nothing
        { tool_id: 'odds_dear', config: { key: '{{Name}}', hit_percent: 100 } }, // 3 credits: past the cap of 2
        { tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'x' } },
      ],
    });
    const est = await p.estimate({ col_ids: [col] });
    expect(est.body).toMatchObject({ cells: 4, credits_max: 4, credits_expected: 4 });
    expect(await p.runAndCharge({ col_ids: [col] })).toBe(4);
  });

  test('estimate_builder tells the reservation; MCP estimate_columns answers what REST does; bad input is refused', async () => {
    const p = await workspaceWithRows(names('Mcp', 3));
    const col = await p.addColumn({ name: 'Lookup', tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'x' } });
    const balance = await t.service.kernel.storage.credits.balance(p.ws.workspaceId);
    const builder = await t.api('POST', '/projects/estimate', {
      ...p.as,
      body: { builder_id: 'slow_builder', form_data: { pages: 3, delay_ms: 0, cursor: false } },
    });
    expect(builder.status).toBe(200);
    expect(builder.body).toEqual({ cells: 30, credits_max: 30, credits_expected: 30, balance, balance_after: balance - 30 });

    const client = await connect(t.service.mcpUrl as string, p.as.headers);
    try {
      const viaMcp = await call(client, 'estimate_columns', { project_id: p.projectId, col_ids_json: JSON.stringify([col]) });
      expect(viaMcp).toEqual({ ok: true, data: (await p.estimate({ col_ids: [col] })).body });
      const b = await call(client, 'estimate_builder', {
        builder_id: 'slow_builder',
        form_data_json: JSON.stringify({ pages: 3, delay_ms: 0, cursor: false }),
      });
      expect(b.data).toEqual(builder.body);
      const bad = await call(client, 'estimate_builder', { builder_id: 'nope', form_data_json: '{}' });
      expect(bad).toMatchObject({ ok: false, status_code: 400 });
    } finally {
      await client.close();
    }
    expect((await p.estimate({ mode: 'sometimes' })).status).toBe(422);
    expect((await p.estimate({ row_ids: ['99999'] })).status).toBe(404);
    expect((await t.api('POST', '/projects/estimate', { ...p.as, body: { builder_id: 'nope', form_data: {} } })).status).toBe(400);
    // Other workspaces' projects are not found.
    const other = await t.newWorkspace('pro', 10);
    const foreign = await t.api('POST', `/projects/${p.projectId}/columns/estimate`, {
      headers: { 'service-api-key': other.key },
      body: {},
    });
    expect(foreign.status).toBe(404);
    expect(await t.service.kernel.storage.credits.balance(p.ws.workspaceId)).toBe(balance);
  });
});
