import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { loadConfig } from '../core/config.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

const PLANS_JSON = JSON.stringify({
  team: { apiAccess: true, monthlyCredits: 50, maxProjects: 2, maxRowsPerProject: 3, requestsPerMinute: 1000 },
  tiny: { apiAccess: true, requestsPerMinute: 5 },
});

describe.each(DIALECTS)('plans, quotas, rate limits and idempotency on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PLANS_JSON });
  });
  afterAll(() => t.stop());
  const as = (key: string) => ({ headers: { 'service-api-key': key } });
  const scoped = (key: string): TestService => ({
    ...t,
    api: (m, p, init) => t.api(m, p, { ...init, headers: { 'service-api-key': key, ...init?.headers } }),
  });

  test('a custom plan grants its monthly credits once, on the first call of the month', async () => {
    const ws = await t.newWorkspace('team', 0);
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(0);
    await t.api('GET', '/projects', as(ws.key));
    await t.api('GET', '/projects', as(ws.key));
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(50);
  });

  test('the project quota answers 403 quota_exceeded and creates nothing', async () => {
    const ws = await t.newWorkspace('team');
    for (let i = 0; i < 2; i++) {
      expect(
        (await t.api('POST', '/projects', { ...as(ws.key), body: { builder_id: 'manual_list_builder', form_data: { companies: 'x' } } }))
          .status,
      ).toBe(201);
    }
    const r = await t.api('POST', '/projects', {
      ...as(ws.key),
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'x' } },
    });
    expect(r.status).toBe(403);
    expect(r.body.detail).toMatchObject({ code: 'quota_exceeded', quota: 'projects', limit: 2 });
    expect((await t.api('GET', '/projects', as(ws.key))).body.total).toBe(2);
  });

  test('the rows-per-project quota stops a builder at the limit and refuses further rows', async () => {
    const ws = await t.newWorkspace('team');
    const r = await t.api('POST', '/projects', {
      ...as(ws.key),
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'a\nb\nc\nd\ne' } },
    });
    const p = await waitForBuilder(scoped(ws.key), r.body.project_id);
    expect(p.row_count).toBe(3);
    expect(p.builder_status.type).toBe('completed');
    // Not silently: the list had 5 lines.
    expect(p.builder_status.warning).toStartWith('stopped at 3 rows: the team plan holds at most 3 rows per project');
    const add = await t.api('POST', `/projects/${r.body.project_id}/rows`, {
      ...as(ws.key),
      body: { company: { Name: 'f', Domain: null } },
    });
    expect(add.status).toBe(403);
    expect(add.body.detail).toMatchObject({ code: 'quota_exceeded', quota: 'rows_per_project', limit: 3 });
  });

  test('over the per-key request rate: 429 with Retry-After and a detail that says when to retry', async () => {
    const ws = await t.newWorkspace('tiny');
    const statuses: number[] = [];
    let last: Awaited<ReturnType<TestService['api']>> | undefined;
    for (let i = 0; i < 7; i++) {
      last = await t.api('GET', '/projects', as(ws.key));
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last?.body.detail).toContain('per minute');
    expect(last?.headers.get('ratelimit-limit')).toBe('5');
    expect(last?.headers.get('ratelimit-remaining')).toBe('0');
  });

  test('every answer to a known key tells its budget: RateLimit-Limit, -Remaining, -Reset', async () => {
    const ws = await t.newWorkspace('tiny');
    const seen: [string | null, string | null][] = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.api('GET', '/projects', as(ws.key));
      seen.push([r.headers.get('ratelimit-limit'), r.headers.get('ratelimit-remaining')]);
    }
    expect(seen).toEqual([
      ['5', '4'],
      ['5', '3'],
      ['5', '2'],
    ]);
    // 3 of 5 spent at 5 per minute: the bucket is full again in about 36 s.
    const failed = await t.api('GET', '/projects/nope', as(ws.key));
    expect(failed.status).toBe(404);
    expect(failed.headers.get('ratelimit-remaining')).toBe('1');
    expect(Number(failed.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(30);
    expect(Number(failed.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    // An unknown key spends no one's budget and is told none.
    const stranger = await t.api('GET', '/projects', as('wfs_nobody'));
    expect(stranger.status).toBe(401);
    expect(stranger.headers.get('ratelimit-limit')).toBeNull();
  });

  test('a retried POST with the same Idempotency-Key returns the first answer and charges once', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const body = { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 10 } };
    const headers = { 'service-api-key': ws.key, 'idempotency-key': 'create-1' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => t.api('POST', '/projects', { headers, body })));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([201]));
    expect(new Set(answers.map((a) => a.body.project_id)).size).toBe(1);
    await t.service.kernel.queue.drain();
    expect((await t.api('GET', '/projects', as(ws.key))).body.total).toBe(1);
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(90);
    const later = await t.api('POST', '/projects', { headers, body });
    expect(later.body.project_id).toBe(answers[0]?.body.project_id);
  });

  test('the same Idempotency-Key with another body is 422', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const headers = { 'service-api-key': ws.key, 'idempotency-key': 'create-2' };
    await t.api('POST', '/projects', { headers, body: { builder_id: 'manual_list_builder', form_data: { companies: 'a' } } });
    const r = await t.api('POST', '/projects', { headers, body: { builder_id: 'manual_list_builder', form_data: { companies: 'b' } } });
    expect(r.status).toBe(422);
    expect(r.body.detail.message).toContain('Idempotency-Key');
  });

  test('a refused request is replayed as refused (the key is spent on it)', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const headers = { 'service-api-key': ws.key, 'idempotency-key': 'bad-1' };
    const body = { builder_id: 'nope', form_data: {} };
    expect((await t.api('POST', '/projects', { headers, body })).status).toBe(400);
    const again = await t.api('POST', '/projects', { headers, body });
    expect(again.status).toBe(400);
    expect(again.body.detail.message).toContain('Unknown builder_id');
  });

  test('adding a row with an Idempotency-Key twice adds it once', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const p = await t.api('POST', '/projects', {
      ...as(ws.key),
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'a' } },
    });
    await waitForBuilder(scoped(ws.key), p.body.project_id);
    const headers = { 'service-api-key': ws.key, 'idempotency-key': 'row-1' };
    const body = { company: { Name: 'Once', Domain: null } };
    const [a, b] = await Promise.all([
      t.api('POST', `/projects/${p.body.project_id}/rows`, { headers, body }),
      t.api('POST', `/projects/${p.body.project_id}/rows`, { headers, body }),
    ]);
    expect(a.body.row_id).toBe(b.body.row_id);
    expect((await t.api('GET', `/projects/${p.body.project_id}/rows`, as(ws.key))).body.total_rows).toBe(2);
  });
});

test('a PLANS_JSON with a wrong field stops start-up with a message naming it', () => {
  expect(() => loadConfig({ PLANS_JSON: '{"team": {"apiAccess": "yes"}}' })).toThrow('team.apiAccess');
  expect(() => loadConfig({ PLANS_JSON: '{oops' })).toThrow('PLANS_JSON is not valid JSON');
});
