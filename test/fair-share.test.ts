import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { InProcessQueue } from '../adapters/queue/in-process.ts';
import { FairLanes, mayStart } from '../core/jobs/fair-share.ts';
import { recordEvents } from '../core/webhooks/events.ts';
import { spawnWorkerOf, startTestService, type TestService } from './support/test-service.ts';
import { setEnv } from './plugins/enrich-helpers.ts';
import { DIALECTS } from './support/databases.ts';
import { until } from './support/until.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

describe('the fair-share rule', () => {
  test('a workspace runs up to its share; past it, idle slots but the last one', () => {
    // 4 slots, share 0.5: two slots whatever else runs, a third while one stays free, never the fourth.
    expect(mayStart(0, 0, 4, 0.5)).toBe(true);
    expect(mayStart(1, 3, 4, 0.5)).toBe(true);
    expect(mayStart(2, 2, 4, 0.5)).toBe(true);
    expect(mayStart(3, 3, 4, 0.5)).toBe(false);
    expect(mayStart(2, 3, 4, 0.5)).toBe(false);
    // One slot: whoever has none running.
    expect(mayStart(0, 0, 1, 0.5)).toBe(true);
    expect(mayStart(1, 1, 1, 0.5)).toBe(false);
    // Jobs that name no workspace are the host's: not shared out.
    expect(mayStart(3, 3, 4, 0.5, '')).toBe(true);
  });

  test('lanes are taken in turn, oldest first within a workspace, skipping one that may not start', () => {
    const lanes = new FairLanes<string>();
    for (const j of ['a1', 'a2', 'a3']) lanes.push('A', j);
    lanes.push('B', 'b1');
    lanes.push(undefined, 'n1');
    const order: string[] = [];
    for (let next = lanes.take(() => true); next; next = lanes.take(() => true)) order.push(next);
    expect(order).toEqual(['a1', 'b1', 'n1', 'a2', 'a3']);
    for (let i = 0; i < 3000; i++) lanes.push('A', `x${i}`);
    lanes.push('B', 'b2');
    expect(lanes.take((t) => t !== 'A')).toBe('b2');
    expect(lanes.size).toBe(3000);
    expect(lanes.take(() => true)).toBe('x0');
    expect(lanes.drain()).toHaveLength(2999);
  });

  test('in-process queue: a flood of one workspace leaves a slot for another, which runs before the flood ends', async () => {
    const q = new InProcessQueue({ workspaceShare: 0.5 });
    const release: (() => void)[] = [];
    const done: string[] = [];
    q.consume(
      {
        long: (job) =>
          new Promise<void>((ok) =>
            release.push(() => {
              done.push(job.id);
              ok();
            }),
          ),
        short: async (job) => {
          done.push(job.id);
        },
      },
      { concurrency: 4 },
    );
    for (let i = 0; i < 10; i++) await q.enqueue('long', {}, { id: `a${i}`, tenant: 'A' });
    await until(() => release.length === 3); // A holds three of the four slots
    await q.enqueue('short', {}, { id: 'b', tenant: 'B' });
    await until(() => done.includes('b'));
    expect(done).toEqual(['b']); // B ran while all of A's jobs were still running or waiting
    await until(async () => (await q.stats()).running === 3);
    expect(release).toHaveLength(3); // and A did not take the slot B left
    while (done.length < 11) {
      release.shift()?.();
      await Bun.sleep(1);
    }
    await q.close();
  });
});

/**
 * One tenant never waits for another: B's small work finishes while A floods each kind — embedded
 * (SQLite, in-process queue) and as in production (MariaDB + Redis, the jobs in a separate worker).
 */
describe.each(DIALECTS)('fair scheduling between workspaces on %s', (dialect) => {
  let t: TestService;
  let a: { workspaceId: string; key: string };
  let worker: Subprocess | undefined;
  let restore = () => {};
  beforeAll(async () => {
    restore = setEnv({ ALLOW_PRIVATE_NETWORK: '127.0.0.1' }); // the endpoints are on loopback
    const env = {
      PLUGINS_DIR: FIXTURE_PLUGINS,
      WORKER_CONCURRENCY: '4',
      WEBHOOK_POLL_MS: '50',
      PLANS_JSON: JSON.stringify({ pro: { requestsPerMinute: null } }),
    };
    t = await startTestService(dialect, dialect === 'mysql' ? { ...env, WORKERS: '0' } : env);
    if (dialect === 'mysql') worker = spawnWorkerOf(t, { ...env, JOB_BACKOFF_MS: '50' });
    a = await t.newWorkspace();
  });
  afterAll(async () => {
    restore();
    worker?.kill('SIGKILL');
    await t.stop();
  });

  const asA = (method: string, path: string, body?: unknown) => t.api(method, path, { body, headers: { 'service-api-key': a.key } });
  const state = async (id: string, key = t.key) =>
    (await t.api('GET', `/projects/${id}`, { headers: { 'service-api-key': key } })).body.builder_status.type as string;

  test('builder runs: B’s two-row import completes while A’s five long runs still hold their slots', async () => {
    const floods: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await asA('POST', '/projects', { builder_id: 'slow_builder', form_data: { pages: 100, delay_ms: 300, cursor: true } });
      expect(r.status).toBe(201);
      floods.push(r.body.project_id);
    }
    await until(async () => (await Promise.all(floods.map((id) => state(id, a.key)))).filter((s) => s === 'running').length >= 3);
    const b = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nOne\nTwo' } } });
    await until(async () => (await state(b.body.project_id)) === 'completed', 20_000);
    // Every one of A's runs is still going (30 s each): B did not wait for them.
    expect((await Promise.all(floods.map((id) => state(id, a.key)))).every((s) => s === 'running' || s === 'queued')).toBe(true);
    for (const id of floods) await asA('DELETE', `/projects/${id}`);
  }, 60_000);

  test('enrichment: B’s column fills while A’s slow column of 400 rows is still being worked', async () => {
    const csv = `Name\n${Array.from({ length: 400 }, (_, i) => `Row ${i}`).join('\n')}`;
    const pa = (await asA('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv } })).body.project_id;
    await until(async () => (await state(pa, a.key)) === 'completed');
    const slow = await asA('POST', `/projects/${pa}/columns`, {
      name: 'Slow',
      tool_id: 'slow_tool',
      config: { text: '{{Name}}', delay_ms: 1000 },
    });
    expect((await asA('POST', `/projects/${pa}/columns/run`, { col_ids: [slow.body.col_id] })).status).toBe(200);
    const pb = (await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nOne\nTwo' } } }))
      .body.project_id;
    await until(async () => (await state(pb)) === 'completed');
    const col = await t.api('POST', `/projects/${pb}/columns`, {
      body: { name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    await t.api('POST', `/projects/${pb}/columns/run`, { body: { col_ids: [col.body.col_id] } });
    await until(async () => {
      const rows = (await t.api('GET', `/projects/${pb}/rows?format=values`)).body.rows;
      return rows.every((r: any) => typeof r.values.Upper === 'string');
    }, 20_000);
    const aRows = (await asA('GET', `/projects/${pa}/rows?page_size=100&format=values`)).body;
    const unfinished = aRows.rows.filter((r: any) => r.status?.Slow && r.status.Slow !== 'completed').length;
    expect(unfinished).toBeGreaterThan(0); // A's column was still being worked when B's was done
    await asA('DELETE', `/projects/${pa}`);
  }, 60_000);

  test('webhooks: B’s delivery arrives while A’s twenty hanging endpoints still hold theirs', async () => {
    const hanging = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Bun.sleep(14_000).then(() => new Response('late')) });
    const received: unknown[] = [];
    const fast = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (req) => {
        received.push(await req.json());
        return new Response('ok');
      },
    });
    try {
      const hooks: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await asA('POST', '/webhooks', { url: `http://127.0.0.1:${hanging.port}/hook/${i}`, events: ['column.completed'] });
        expect(r.status).toBe(201);
        hooks.push(r.body.id);
      }
      await recordEvents(
        t.service.kernel,
        a.workspaceId,
        'column.completed',
        Array.from({ length: 40 }, (_, i) => ({ dedupeKey: `flood-${i}`, data: { n: i } })),
      );
      await Bun.sleep(300); // A's deliveries are claimed and hang
      const mine = await t.api('POST', '/webhooks', { body: { url: `http://127.0.0.1:${fast.port}/hook`, events: ['column.completed'] } });
      expect(mine.status).toBe(201);
      await recordEvents(t.service.kernel, t.workspaceId, 'column.completed', [{ dedupeKey: 'b-1', data: { n: 1 } }]);
      await until(() => received.length === 1, 10_000);
      // None of A's deliveries has had an answer yet (they hang 14 s): B's did not wait for them.
      for (const id of hooks.slice(0, 5)) {
        const { deliveries } = (await asA('GET', `/webhooks/${id}/deliveries`)).body;
        expect(deliveries.every((d: any) => d.status === 'pending' && d.attempts === 0)).toBe(true);
      }
    } finally {
      hanging.stop(true);
      fast.stop(true);
    }
  }, 60_000);
});
