import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { runAdmin } from '../doors/cli/admin.ts';
import { issueApiKey } from '../core/identity/api-keys.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/**
 * Spend control (docs/enrichment.md): a run's `max_credits` stops its charges at the cap and leaves the rest
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
  async function project(n: number) {
    const p = await rowsOnly(n);
    const colId = await p.column({ name: 'Lookup', tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'found {{Name}}' } });
    const run = (body: Record<string, unknown>, key = p.ws.key) => p.run({ col_ids: [colId], ...body }, key);
    return { ...p, run, statuses: () => counts(p.ws.key, p.projectId, 'Lookup') };
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

  /** Statuses of one column's cells, counted. */
  async function counts(key: string, projectId: string, column: string) {
    const rows = await t.api('GET', `/projects/${projectId}/rows?page_size=100`, as(key));
    const out: Record<string, number> = {};
    for (const r of rows.body.rows) out[r.company[column].status] = (out[r.company[column].status] ?? 0) + 1;
    return out;
  }

  /** A project of `n` rows named Company 1…n, and a helper to add columns to it. */
  async function rowsOnly(n: number) {
    const ws = await t.newWorkspace('pro', 1_000);
    const names = Array.from({ length: n }, (_, i) => `Company ${i + 1}`).join('\n');
    const made = await t.api('POST', '/projects', {
      ...as(ws.key),
      body: { builder_id: 'manual_list_builder', form_data: { companies: names } },
    });
    const projectId = made.body.project_id as string;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as(ws.key));
    const column = async (body: Record<string, unknown>) =>
      (await t.api('POST', `/projects/${projectId}/columns`, { ...as(ws.key), body })).body.col_id as string;
    const run = (body: Record<string, unknown>, key = ws.key) => t.api('POST', `/projects/${projectId}/columns/run`, { ...as(key), body });
    const settle = async () => {
      const waited = await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as(ws.key));
      // Nothing left queued or running for ever (the statuses are told when it is not so).
      if (!waited.body.ended) {
        const rows = (await t.api('GET', `/projects/${projectId}/rows?page_size=100`, as(ws.key))).body.rows;
        const cells = rows.map((r: any) => Object.fromEntries(Object.entries(r.company).map(([k, c]: [string, any]) => [k, c.status])));
        expect({ ended: waited.body.ended, cells }).toEqual({ ended: true, cells });
      }
    };
    return { ws, projectId, column, run, settle };
  }

  test('a waterfall under a cap: a cell that paid its first step finishes, and is never paid twice', async () => {
    const p = await rowsOnly(10);
    const col = await p.column({
      name: 'Found',
      waterfall: [
        { tool_id: 'attempt_lookup', config: { key: '{{Name}}' } }, // finds nothing, 1 credit
        { tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'yes' } }, // finds, 1 credit
      ],
    });
    const before = await balance(p.ws.workspaceId);
    await p.run({ col_ids: [col], max_credits: 5 });
    await p.settle();
    // Five cells started within the cap and finished their second step; five wait, pending.
    expect(await counts(p.ws.key, p.projectId, 'Found')).toEqual({ completed: 5, pending: 5 });
    expect(before - (await balance(p.ws.workspaceId))).toBe(10);
    await p.run({ col_ids: [col], max_credits: 5 });
    await p.settle();
    expect(await counts(p.ws.key, p.projectId, 'Found')).toEqual({ completed: 10 });
    // Two credits a cell, exactly: no step was paid twice.
    expect(before - (await balance(p.ws.workspaceId))).toBe(20);
  });

  test('a column reading a capped column is never left queued: its cells wait, pending, with the cells they read', async () => {
    const p = await rowsOnly(10);
    const x = await p.column({ name: 'X', tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'x {{Name}}' } });
    const y = await p.column({ name: 'Y', tool_id: 'attempt_lookup', config: { key: '{{X}}', answer: 'y' } });
    await p.run({ col_ids: [x, y], max_credits: 6 });
    await p.settle();
    const xs = await counts(p.ws.key, p.projectId, 'X');
    const ys = await counts(p.ws.key, p.projectId, 'Y');
    expect(xs.completed).toBeGreaterThanOrEqual(3);
    expect((xs.completed ?? 0) + (ys.completed ?? 0)).toBe(6);
    expect(xs.queued ?? 0).toBe(0);
    expect(ys.queued ?? 0).toBe(0);
    // A later run without a cap finishes both.
    await p.run({ col_ids: [x, y] });
    await p.settle();
    expect(await counts(p.ws.key, p.projectId, 'Y')).toEqual({ completed: 10 });
  });

  test('cells keep the limits of the call that queued them, whichever job runs them (a follow-up of another key’s run)', async () => {
    const p = await rowsOnly(10);
    const x = await p.column({ name: 'X', tool_id: 'attempt_lookup', config: { key: '{{Name}}', answer: 'x {{Name}}' } });
    const y = await p.column({ name: 'Y', tool_id: 'attempt_lookup', config: { key: '{{X}}', answer: 'y' } });
    const capped = await issueApiKey(t.service.kernel.storage.workspaces, p.ws.workspaceId, undefined, undefined, 2);
    // The capped key queues Y, whose cells wait for X; the workspace's uncapped key then runs X.
    expect((await p.run({ col_ids: [y] }, capped.api_key)).body.queued).toBe(10);
    await p.run({ col_ids: [x] });
    await p.settle();
    expect(await counts(p.ws.key, p.projectId, 'X')).toEqual({ completed: 10 });
    // Y's cells ran as follow-ups of X's jobs, under the capped key's limits: two, then held.
    expect(await counts(p.ws.key, p.projectId, 'Y')).toEqual({ completed: 2, pending: 8 });
    const keyId = (await t.service.kernel.storage.workspaces.listKeys(p.ws.workspaceId)).find((k) => k.prefix === capped.prefix)
      ?.id as string;
    const month = await t.service.kernel.storage.credits.keyMonth(keyId);
    expect(month?.spent).toBe(2);
    // The key's monthly count is what its ledger entries say.
    const entries = await t.service.kernel.storage.credits.entries(p.ws.workspaceId, 1000);
    expect(-entries.filter((e) => e.keyId === keyId).reduce((sum, e) => sum + e.amount, 0)).toBe(2);
  });

  test('a per-result run under a cap: refunds make room, and the run goes on until its found results use the cap', async () => {
    const p = await rowsOnly(40);
    const col = await p.column({ name: 'Email', tool_id: 'odds_found', config: { key: '{{Name}}', hit_percent: 40 } });
    const before = await balance(p.ws.workspaceId);
    await p.run({ col_ids: [col], max_credits: 10 });
    await p.settle();
    const c = await counts(p.ws.key, p.projectId, 'Email');
    // 2 credits per result found, nothing for the rest: five results use the cap of 10.
    expect(c.completed).toBe(5);
    expect(before - (await balance(p.ws.workspaceId))).toBe(10);
    expect(c.no_result).toBeGreaterThan(0);
    expect(c.pending).toBeGreaterThan(0);
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

  test('a run takes charges and gets refunds back, atomically with the ledger; enforce: false records without stopping', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const credits = t.service.kernel.storage.credits;
    const runId = await credits.createRun(ws.workspaceId, { cap: 5 });
    const items = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ idemKey: `cap:${runId}:${from + i}` }));
    const first = await credits.chargeMany(ws.workspaceId, 2, items(0, 4), { id: runId });
    expect(first.paid.size).toBe(2);
    expect(first.stoppedBy).toBe('run_cap');
    // A refund (nothing found) gives its 2 credits back to the run: one more item fits.
    await credits.refund(ws.workspaceId, 2, { idemKey: `cap:${runId}:0:refund` }, { charge: `cap:${runId}:0`, runId });
    expect(await credits.run(runId)).toEqual({ cap: 5, spent: 2, keyId: null });
    const second = await credits.chargeMany(ws.workspaceId, 2, items(2, 2), { id: runId });
    expect(second.paid.size).toBe(1);
    expect(await credits.run(runId)).toEqual({ cap: 5, spent: 4, keyId: null });
    expect(await balance(ws.workspaceId)).toBe(100 - 4);
    // Charged again under the same keys (a redelivered job), nothing moves.
    const again = await credits.chargeMany(ws.workspaceId, 2, items(0, 2), { id: runId });
    expect(again.paid.size).toBe(2);
    expect(await credits.run(runId)).toEqual({ cap: 5, spent: 4, keyId: null });
    // A cell already under way finishes: recorded against the run, past its cap.
    const finishing = await credits.chargeMany(ws.workspaceId, 2, items(10, 1), { id: runId, enforce: false });
    expect(finishing.paid.size).toBe(1);
    expect(await credits.run(runId)).toEqual({ cap: 5, spent: 6, keyId: null });
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
