import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

async function settledRows(t: TestService, projectId: string, key: string): Promise<any[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await t.api('GET', `/projects/${projectId}/rows?page_size=100`, { headers: { 'service-api-key': key } });
    if (!r.body.rows.some((row: any) => Object.values(row.company).some((c: any) => c.is_loading))) return r.body.rows;
    if (Date.now() > deadline) throw new Error('cells still loading');
    await Bun.sleep(20);
  }
}

describe.each(DIALECTS)('credits on %s', (dialect) => {
  let t: TestService;
  let places: ReturnType<typeof Bun.serve>;
  beforeAll(async () => {
    // A stand-in for Google Places that finds 12 places, whatever max_results asks.
    places = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => Response.json({ places: Array.from({ length: 12 }, (_, i) => ({ displayName: { text: `Place ${i}` } })) }),
    });
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS });
  });
  afterAll(async () => {
    await t.stop();
    places.stop(true);
  });

  const balance = (workspaceId: string) => t.service.kernel.storage.credits.balance(workspaceId);
  const ledgerSum = async (workspaceId: string) =>
    (await t.service.kernel.storage.credits.entries(workspaceId, 100_000)).reduce((s, e) => s + e.amount, 0);
  const as = (key: string) => ({ headers: { 'service-api-key': key } });

  test('a builder reserves max_results × cost, spends per row written and gives the rest back', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const env = { GOOGLE_MAPS_API_KEY: 'k', GOOGLE_MAPS_BASE_URL: places.url.origin, ALLOW_PRIVATE_NETWORK: '1' };
    Object.assign(process.env, env);
    const live = await startTestService(dialect, { PROVIDER_MODE: 'live', ALLOW_PRIVATE_NETWORK: '1' });
    try {
      const w = await live.newWorkspace('pro', 100);
      const r = await live.api('POST', '/projects', {
        ...as(w.key),
        body: { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 30 } },
      });
      expect(r.status).toBe(201);
      const p = await waitForBuilder({ ...live, api: (m, path, init) => live.api(m, path, { ...init, ...as(w.key) }) }, r.body.project_id);
      expect(p.row_count).toBe(12);
      expect(await live.service.kernel.storage.credits.balance(w.workspaceId)).toBe(88);
      const kinds = (await live.service.kernel.storage.credits.entries(w.workspaceId, 10)).map((e) => [e.kind, e.amount]).reverse();
      expect(kinds).toEqual([
        ['grant', 100],
        ['reserve', -30],
        ['refund', 18],
      ]);
    } finally {
      await live.stop();
      delete process.env.GOOGLE_MAPS_API_KEY;
      delete process.env.GOOGLE_MAPS_BASE_URL;
      delete process.env.ALLOW_PRIVATE_NETWORK;
    }
    expect(await balance(ws.workspaceId)).toBe(100);
  });

  test('not enough credits for a build is 402 with the amount needed, and nothing is created', async () => {
    const ws = await t.newWorkspace('pro', 10);
    const r = await t.api('POST', '/projects', {
      ...as(ws.key),
      body: { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 30 } },
    });
    expect(r.status).toBe(402);
    expect(r.body.detail).toMatchObject({ code: 'insufficient_credits', needed: 30, balance: 10 });
    expect(r.body.detail.message).toContain('max_results');
    expect((await t.api('GET', '/projects', as(ws.key))).body.total).toBe(0);
    expect(await balance(ws.workspaceId)).toBe(10);
  });

  test('100 parallel builds against a balance that covers 10: exactly 10 start, the balance never goes negative', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        t.api('POST', '/projects', {
          ...as(ws.key),
          body: { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 10 } },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(90);
    await t.service.kernel.queue.drain();
    expect(await balance(ws.workspaceId)).toBe(0);
    expect(await ledgerSum(ws.workspaceId)).toBe(0);
    expect((await t.api('GET', '/projects', as(ws.key))).body.total).toBe(10);
  });

  describe('enrichment', () => {
    let ws: { workspaceId: string; key: string };
    let pid: string;
    const csv = 'Name,Key,Answer\nA,k1,a@example.com\nB,k2,\nC,k3,c@example.com\n';
    beforeAll(async () => {
      ws = await t.newWorkspace('pro', 5);
      const r = await t.api('POST', '/projects', {
        ...as(ws.key),
        body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } },
      });
      pid = r.body.project_id;
      await waitForBuilder({ ...t, api: (m, path, init) => t.api(m, path, { ...init, ...as(ws.key) }) }, pid);
    });

    test('per-result tools hold the price while they look and keep it only for results; unpayable cells wait', async () => {
      const col = await t.api('POST', `/projects/${pid}/columns`, {
        ...as(ws.key),
        body: { name: 'Email', tool_id: 'paid_lookup', config: { key: '{{Key}}', answer: '{{Answer}}' } },
      });
      expect(col.status).toBe(201);
      await t.api('POST', `/projects/${pid}/columns/run`, { ...as(ws.key), body: {} });
      const rows = await settledRows(t, pid, ws.key);
      // 5 credits at 2 each cover A and B; B finds nothing and gets its 2 back; C could not be paid.
      expect(rows.map((r) => r.company.Email.status)).toEqual(['completed', 'no_result', 'insufficient_credits']);
      expect(rows[2].company.Email.error).toContain('add credits');
      expect(await balance(ws.workspaceId)).toBe(3);
      expect(await ledgerSum(ws.workspaceId)).toBe(3);
    });

    test('a cell that lacked credits resumes when credits are granted and the column is run again', async () => {
      await t.service.kernel.storage.credits.grant(ws.workspaceId, 10);
      const again = await t.api('POST', `/projects/${pid}/columns/run`, { ...as(ws.key), body: {} });
      expect(again.body).toEqual({ queued: 1 });
      const rows = await settledRows(t, pid, ws.key);
      expect(rows.map((r) => r.company.Email.status)).toEqual(['completed', 'no_result', 'completed']);
      expect(await balance(ws.workspaceId)).toBe(11);
    });

    test('per-attempt tools charge every row they try, found or not', async () => {
      const col = await t.api('POST', `/projects/${pid}/columns`, {
        ...as(ws.key),
        body: { name: 'Email 2', tool_id: 'attempt_lookup', config: { key: '{{Key}}', answer: '{{Answer}}' } },
      });
      await t.api('POST', `/projects/${pid}/columns/run`, { ...as(ws.key), body: { col_ids: [col.body.col_id] } });
      const rows = await settledRows(t, pid, ws.key);
      expect(rows.map((r) => r.company['Email 2'].status)).toEqual(['completed', 'no_result', 'completed']);
      expect(await balance(ws.workspaceId)).toBe(8);
    });

    test('a cached result costs nothing', async () => {
      const col = await t.api('POST', `/projects/${pid}/columns`, {
        ...as(ws.key),
        body: { name: 'Email again', tool_id: 'paid_lookup', config: { key: '{{Key}}', answer: '{{Answer}}' } },
      });
      await t.api('POST', `/projects/${pid}/columns/run`, { ...as(ws.key), body: { col_ids: [col.body.col_id] } });
      const rows = await settledRows(t, pid, ws.key);
      expect(rows.map((r) => r.company['Email again'].value)).toEqual(['a@example.com', null, 'c@example.com']);
      // A and C come from the cache; only B (nothing found, so nothing cached) is tried, and refunded.
      expect(await balance(ws.workspaceId)).toBe(8);
      expect(await ledgerSum(ws.workspaceId)).toBe(8);
    });

    test('a waterfall stops at the first valid result and charges only as each step’s cost rules say', async () => {
      const w = await t.newWorkspace('pro', 20);
      const r = await t.api('POST', '/projects', {
        ...as(w.key),
        body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name,Key\nZed,z1\n' } },
      });
      await waitForBuilder({ ...t, api: (m, path, init) => t.api(m, path, { ...init, ...as(w.key) }) }, r.body.project_id);
      const col = await t.api('POST', `/projects/${r.body.project_id}/columns`, {
        ...as(w.key),
        body: {
          name: 'Email',
          waterfall: [
            { tool_id: 'attempt_lookup', config: { key: '{{Key}}' } }, // nothing, 1 credit
            { tool_id: 'paid_lookup', config: { key: 'miss-{{Key}}' } }, // nothing, refunded
            { tool_id: 'paid_lookup', config: { key: 'hit-{{Key}}', answer: 'zed@example.com' } }, // found, 2 credits
            { tool_id: 'attempt_lookup', config: { key: '{{Key}}', answer: 'never@example.com' } }, // not reached
          ],
        },
      });
      expect(col.status).toBe(201);
      await t.api('POST', `/projects/${r.body.project_id}/columns/run`, { ...as(w.key), body: {} });
      const rows = await settledRows(t, r.body.project_id, w.key);
      expect(rows[0].company.Email).toMatchObject({ status: 'completed', value: 'zed@example.com' });
      expect(await balance(w.workspaceId)).toBe(17);
    });

    test('a waterfall respects its per-row credit cap', async () => {
      const w = await t.newWorkspace('pro', 20);
      const r = await t.api('POST', '/projects', {
        ...as(w.key),
        body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name,Key\nYu,y1\n' } },
      });
      await waitForBuilder({ ...t, api: (m, path, init) => t.api(m, path, { ...init, ...as(w.key) }) }, r.body.project_id);
      await t.api('POST', `/projects/${r.body.project_id}/columns`, {
        ...as(w.key),
        body: {
          name: 'Email',
          max_credits_per_row: 1,
          waterfall: [
            { tool_id: 'attempt_lookup', config: { key: '{{Key}}' } },
            { tool_id: 'attempt_lookup', config: { key: '{{Key}}', answer: 'yu@example.com' } },
          ],
        },
      });
      await t.api('POST', `/projects/${r.body.project_id}/columns/run`, { ...as(w.key), body: {} });
      const rows = await settledRows(t, r.body.project_id, w.key);
      expect(rows[0].company.Email).toMatchObject({ status: 'no_result', error: 'stopped at the credit cap of 1 per row' });
      expect(await balance(w.workspaceId)).toBe(19);
    });
  });

  test('a row that fails retryably is tried again alone; the rows that succeeded are neither re-run nor charged twice', async () => {
    const w = await t.newWorkspace('pro', 100);
    const scoped = { ...t, api: (m: string, p: string, init?: any) => t.api(m, p, { ...init, ...as(w.key) }) };
    const r = await t.api('POST', '/projects', {
      ...as(w.key),
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: `Key,Fails\n${dialect}-a,2\n${dialect}-b,0\n${dialect}-c,0\n` } },
    });
    await waitForBuilder(scoped, r.body.project_id);
    await t.api('POST', `/projects/${r.body.project_id}/columns`, {
      ...as(w.key),
      body: { name: 'Out', tool_id: 'flaky_tool', config: { key: '{{Key}}', fail_times: '{{Fails}}' } },
    });
    const { calls } = await import('./fixtures/plugins/tools/flaky_tool/index.ts');
    await t.api('POST', `/projects/${r.body.project_id}/columns/run`, { ...as(w.key), body: {} });
    const rows = await settledRows(t, r.body.project_id, w.key);
    expect(rows.map((row) => [row.company.Out.status, row.company.Out.value])).toEqual([
      ['completed', `${dialect.toUpperCase()}-A`],
      ['completed', `${dialect.toUpperCase()}-B`],
      ['completed', `${dialect.toUpperCase()}-C`],
    ]);
    expect([calls.get(`${dialect}-a`), calls.get(`${dialect}-b`), calls.get(`${dialect}-c`)]).toEqual([3, 1, 1]);
    expect(await balance(w.workspaceId)).toBe(97); // one charge per row and job, whatever the retries
  });

  test('a charge with an idempotency key already paid is not paid again (redelivered jobs)', async () => {
    const ws = await t.newWorkspace('pro', 10);
    const credits = t.service.kernel.storage.credits;
    const items = [{ idemKey: `test:${ws.workspaceId}:1` }, { idemKey: `test:${ws.workspaceId}:2` }];
    const [a, b] = await Promise.all([credits.chargeMany(ws.workspaceId, 3, items), credits.chargeMany(ws.workspaceId, 3, items)]);
    expect([...a.paid].sort()).toEqual(items.map((i) => i.idemKey).sort());
    expect([...b.paid].sort()).toEqual(items.map((i) => i.idemKey).sort());
    expect(await balance(ws.workspaceId)).toBe(4);
    expect(await ledgerSum(ws.workspaceId)).toBe(4);
  });
});
