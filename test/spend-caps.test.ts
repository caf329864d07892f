import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { runAdmin } from '../core/cli/admin.ts';
import { issueApiKey } from '../core/services/api-keys.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/**
 * Spend control (DESIGN §12): a run's `max_credits` stops its charges at the cap and leaves the rest
 * `pending`; an API key's monthly cap stops its work the same way and refuses new spending with 402.
 */
describe.each(DIALECTS)('spend caps on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, MCP_PORT: '0' });
  });
  afterAll(() => t.stop());

  const as = (key: string) => ({ headers: { 'service-api-key': key } });
  const balance = (workspaceId: string) => t.service.kernel.storage.credits.balance(workspaceId);

  /** A workspace with a project of `n` rows and a `Lookup` column priced 1 credit per attempt. */
  async function project(n: number, credits = 1_000) {
    const ws = await t.newWorkspace('pro', credits);
    const names = Array.from({ length: n }, (_, i) => `Company ${i + 1}`).join('\n');
    const made = await t.api('POST', '/projects', {
      ...as(ws.key),
      body: { builder_id: 'manual_list_builder', form_data: { companies: names } },
    });
    const projectId = made.body.project_id as string;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as(ws.key));
    const col = await t.api('POST', `/projects/${projectId}/columns`, {
      ...as(ws.key),
      body: { name: 'Lookup', tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'found {{Name}}' } },
    });
    expect(col.status).toBe(201);
    const run = (body: Record<string, unknown>, key = ws.key) =>
      t.api('POST', `/projects/${projectId}/columns/run`, { ...as(key), body: { col_ids: [col.body.col_id], ...body } });
    const settle = () => t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as(ws.key));
    const statuses = async () => {
      const rows = await t.api('GET', `/projects/${projectId}/rows?page_size=100`, as(ws.key));
      const count: Record<string, number> = {};
      for (const r of rows.body.rows) count[r.company.Lookup.status] = (count[r.company.Lookup.status] ?? 0) + 1;
      return count;
    };
    return { ws, projectId, run, settle, statuses };
  }

  test('max_credits: the run charges up to its cap, the cells left stay pending, a later run finishes them', async () => {
    const p = await project(10);
    const before = await balance(p.ws.workspaceId);
    const capped = await p.run({ max_credits: 4 });
    expect(capped.status).toBe(200);
    expect(capped.body).toEqual({ queued: 10, max_credits: 4 });
    await p.settle();
    expect(await p.statuses()).toEqual({ completed: 4, pending: 6 });
    expect(await balance(p.ws.workspaceId)).toBe(before - 4);

    // A second run with its own cap takes the next ones; without a cap, the rest.
    expect((await p.run({ max_credits: 2 })).body.queued).toBe(6);
    await p.settle();
    expect(await p.statuses()).toEqual({ completed: 6, pending: 4 });
    expect((await p.run({})).body).toEqual({ queued: 4 });
    await p.settle();
    expect(await p.statuses()).toEqual({ completed: 10 });
    expect(await balance(p.ws.workspaceId)).toBe(before - 10);
  });

  test('a cap of 0, a negative or a fractional cap is a 422 and runs and charges nothing', async () => {
    const p = await project(3);
    const before = await balance(p.ws.workspaceId);
    for (const max_credits of [0, -5, 2.5, '3']) {
      const r = await p.run({ max_credits });
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body.detail)).toContain('max_credits');
    }
    expect(await p.statuses()).toEqual({ pending: 3 });
    expect(await balance(p.ws.workspaceId)).toBe(before);
  });

  test('a run budget takes charges and gets refunds back, atomically with the ledger', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const credits = t.service.kernel.storage.credits;
    const budgetId = await credits.createBudget(ws.workspaceId, 5);
    const items = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ idemKey: `cap:${budgetId}:${from + i}` }));
    const first = await credits.chargeMany(ws.workspaceId, 2, items(0, 4), { budgetId });
    expect(first.paid.size).toBe(2);
    expect(first.stoppedBy).toBe('run_cap');
    // A refund (nothing found) gives its 2 credits back to the run: one more item fits.
    await credits.refund(ws.workspaceId, 2, { idemKey: `cap:${budgetId}:0:refund` }, budgetId);
    expect(await credits.budget(budgetId)).toEqual({ cap: 5, spent: 2 });
    const second = await credits.chargeMany(ws.workspaceId, 2, items(2, 2), { budgetId });
    expect(second.paid.size).toBe(1);
    expect(await credits.budget(budgetId)).toEqual({ cap: 5, spent: 4 });
    expect(await balance(ws.workspaceId)).toBe(100 - 4);
    // Charged again under the same keys (a redelivered job), nothing moves.
    const again = await credits.chargeMany(ws.workspaceId, 2, items(0, 2), { budgetId });
    expect(again.paid.size).toBe(2);
    expect(await credits.budget(budgetId)).toEqual({ cap: 5, spent: 4 });
  });

  test('a key with a monthly cap: its work stops at the cap, then its spending calls are 402 naming the cap', async () => {
    const p = await project(10);
    const capped = await issueApiKey(t.service.kernel.storage.workspaces, p.ws.workspaceId, undefined, undefined, 3);
    expect((await p.run({}, capped.api_key)).body).toEqual({ queued: 10 });
    await p.settle();
    expect(await p.statuses()).toEqual({ completed: 3, pending: 7 });

    const refused = await p.run({}, capped.api_key);
    expect(refused.status).toBe(402);
    expect(refused.body.detail).toMatchObject({ code: 'key_cap_reached', monthly_credits: 3, spent_this_month: 3 });
    expect(refused.body.detail.message).toContain('monthly cap of 3 credits');
    const builder = await t.api('POST', '/projects', {
      ...as(capped.api_key),
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'A' } },
    });
    expect(builder.status).toBe(402);
    // Reading is never refused, nor is the workspace's other key.
    expect((await t.api('GET', `/projects/${p.projectId}/rows`, as(capped.api_key))).status).toBe(200);
    expect(await p.statuses()).toEqual({ completed: 3, pending: 7 });

    // MCP says the same; raising the cap (admin CLI) lets the key run again.
    const client = await connect(t.service.mcpUrl as string, { 'service-api-key': capped.api_key });
    try {
      const viaMcp = await call(client, 'run_pending_columns', { project_id: p.projectId });
      expect(viaMcp.ok).toBe(false);
      expect(viaMcp).toMatchObject({ status_code: 402, detail: { code: 'key_cap_reached', monthly_credits: 3 } });
      await runAdmin(['key:cap', '--key', capped.prefix, '--monthly-credits', '5'], t.service.kernel.storage);
      const again = await call(client, 'run_pending_columns', { project_id: p.projectId, wait_seconds: 20 });
      expect(again).toMatchObject({ ok: true, data: { queued: 7 } });
    } finally {
      await client.close();
    }
    expect(await p.statuses()).toEqual({ completed: 5, pending: 5 });
    expect((await p.run({})).body.queued).toBe(5); // the workspace's main key has no cap
    await p.settle();
    expect(await p.statuses()).toEqual({ completed: 10 });
  });

  test('key:create --monthly-credits sets the cap, key:list shows it, key:cap none removes it; bad caps are refused', async () => {
    const ws = await t.newWorkspace('pro', 10);
    const storage = t.service.kernel.storage;
    const made = (await runAdmin(['key:create', '--workspace', ws.workspaceId, '--monthly-credits', '250'], storage)) as any;
    expect(made.monthly_credits).toBe(250);
    const listed = (await runAdmin(['key:list', '--workspace', ws.workspaceId], storage)) as any;
    expect(listed.keys.find((k: any) => k.key_prefix === made.key_prefix).monthly_credits).toBe(250);
    await runAdmin(['key:cap', '--key', made.key_prefix, '--monthly-credits', 'none'], storage);
    const after = (await runAdmin(['key:list', '--workspace', ws.workspaceId], storage)) as any;
    expect(after.keys.find((k: any) => k.key_prefix === made.key_prefix).monthly_credits).toBeNull();
    for (const bad of ['0', '-3', '1.5', 'lots']) {
      await expect(runAdmin(['key:create', '--workspace', ws.workspaceId, '--monthly-credits', bad], storage)).rejects.toThrow(
        /--monthly-credits must be/,
      );
    }
  });
});
