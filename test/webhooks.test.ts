import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../core/config.ts';
import type { Kernel } from '../core/kernel.ts';
import { nextAttemptAt } from '../core/webhooks/dispatcher.ts';
import { recordEvents } from '../core/webhooks/events.ts';
import { setEnv } from './plugins/enrich-helpers.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';
import { until } from './support/until.ts';

/** One request an endpoint received: its headers and body, as sent. */
interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A loopback endpoint standing in for a customer's: records every POST, answers what `answer` says. */
function endpoint(answerBody = 'ok') {
  const received: Received[] = [];
  let answer = (_n: number) => 200;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response(answerBody, { status: answer(received.length) });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/workflow?token=abc`,
    received,
    answerWith(f: (n: number) => number) {
      answer = f;
    },
    stop: () => server.stop(true),
  };
}

const CSV = 'Name,Website\nAcme,acme.com\nGlobex,globex.com\nInitech,initech.com';

describe('the retry schedule', () => {
  test('by default: 5 s, 5 min, 30 min, 2 h, 5 h, then every 10 h, and a last attempt when the 24 h end', () => {
    const kernel = { config: loadConfig({}) } as unknown as Kernel;
    const start = 0;
    const delivery = { retryUntil: start + 24 * 3600_000 };
    const times: number[] = [start];
    for (let n = 1; ; n++) {
      const next = nextAttemptAt(kernel, delivery, n, times[times.length - 1] as number);
      if (next === null) break;
      times.push(next);
    }
    const s = 1000;
    const m = 60 * s;
    const h = 60 * m;
    expect(times).toEqual([0, 5 * s, 5 * s + 5 * m, 5 * s + 35 * m, 5 * s + 155 * m, 5 * s + 455 * m, 5 * s + 1055 * m, 24 * h]);
  });

  test('WEBHOOK_RETRY_DELAYS_S refuses empty and zero waits', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_S: '5,' })).toThrow('WEBHOOK_RETRY_DELAYS_S');
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_S: '0' })).toThrow('above 0');
  });
});

/** Webhooks out (docs/enrichment.md): Standard Webhooks signatures, retries, the delivery log, re-send, the private-network guard. */
describe.each(DIALECTS)('webhooks on %s', (dialect) => {
  let t: TestService;
  let restore: () => void;

  beforeAll(async () => {
    // Loopback endpoints are private addresses: allowed here, refused by default (a test below).
    restore = setEnv({ ALLOW_PRIVATE_NETWORK: '127.0.0.1' });
    t = await startTestService(dialect, { WEBHOOK_RETRY_DELAYS_S: '0.2', WEBHOOK_POLL_MS: '50' });
  });
  afterAll(async () => {
    await t.stop();
    restore();
  });

  const deliveries = async (id: string) => (await t.api('GET', `/webhooks/${id}/deliveries`)).body.deliveries as any[];

  test('a builder run ends: builder.completed arrives signed as Standard Webhooks says, and the log shows it delivered', async () => {
    const ep = endpoint();
    const made = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['builder.completed'], description: 'CRM sync' } });
    expect(made.status).toBe(201);
    expect(made.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const listed = await t.api('GET', '/webhooks');
    expect(listed.body.webhooks).toEqual([
      { id: made.body.id, url: ep.url, events: ['builder.completed'], description: 'CRM sync', created_at: made.body.created_at },
    ]);

    const project = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV }, name: 'Hooked' },
    });
    const got = await until(() => ep.received[0]);
    // Any Standard Webhooks library verifies it with the secret (and refuses it with another).
    const event = new Webhook(made.body.secret).verify(got.body, got.headers) as any;
    expect(event).toMatchObject({
      type: 'builder.completed',
      data: { project_id: project.body.project_id, name: 'Hooked', status: 'completed', rows_created: 3, error: null },
    });
    expect(got.headers['webhook-id']).toMatch(/^msg_/);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret of 24 byte').toString('base64')}`).verify(got.body, got.headers),
    ).toThrow();
    const log = await until(async () => {
      const d = await deliveries(made.body.id);
      return d[0]?.status === 'delivered' ? d : undefined;
    });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      id: got.headers['webhook-id'],
      event_type: 'builder.completed',
      attempts: 1,
      response_status: 200,
      error: null,
    });
    await Bun.sleep(300);
    expect(ep.received).toHaveLength(1); // once
    ep.stop();
  });

  test('an endpoint that fails is retried with the same webhook-id until it answers 2xx; the log tells each step', async () => {
    const ep = endpoint();
    ep.answerWith((n) => (n <= 2 ? 500 : 204));
    const made = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['builder.completed', 'builder.failed'] } });
    await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } });
    await until(() => ep.received.length >= 3);
    expect(new Set(ep.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of ep.received) new Webhook(made.body.secret).verify(r.body, r.headers); // each attempt signed anew
    const [d] = await until(async () => {
      const list = await deliveries(made.body.id);
      return list[0]?.status === 'delivered' ? list : undefined;
    });
    expect(d).toMatchObject({ attempts: 3, response_status: 204, error: null, next_attempt_at: null });
    ep.stop();
  });

  test('a 2xx with a long body is delivered once (only the status counts)', async () => {
    const ep = endpoint('x'.repeat(100_000));
    const made = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['builder.completed'] } });
    await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } });
    await until(async () => (await deliveries(made.body.id))[0]?.status === 'delivered');
    await Bun.sleep(600);
    expect(ep.received).toHaveLength(1);
    expect((await deliveries(made.body.id))[0]).toMatchObject({ attempts: 1, response_status: 200 });
    ep.stop();
  });

  test('an endpoint that hangs holds two slots, not the others: another webhook is delivered meanwhile', async () => {
    const hanging = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Bun.sleep(20_000).then(() => new Response('late')) });
    const slow = await t.api('POST', '/webhooks', { body: { url: `http://127.0.0.1:${hanging.port}/hook`, events: ['column.completed'] } });
    const ep = endpoint();
    const fast = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['builder.completed'] } });
    const events = Array.from({ length: 30 }, (_, i) => ({ dedupeKey: `hang-${i}`, data: { n: i } }));
    await recordEvents(t.service.kernel, t.workspaceId, 'column.completed', events);
    await Bun.sleep(300); // the hanging endpoint's deliveries are claimed and in flight
    const started = Date.now();
    await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } });
    // Delivered while the hanging endpoint still holds its slots (it answers after 20 s).
    await until(() => ep.received[0], 15_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    const log = (await t.api('GET', `/webhooks/${slow.body.id}/deliveries?limit=100`)).body.deliveries;
    expect(log.filter((d: any) => d.attempts > 0 || d.status !== 'pending')).toHaveLength(0); // none answered yet
    await t.api('DELETE', `/webhooks/${slow.body.id}`);
    await t.api('DELETE', `/webhooks/${fast.body.id}`);
    hanging.stop(true);
    ep.stop();
  });

  test('tool results: row.enriched for each row (with its values), column.completed once', async () => {
    const ep = endpoint();
    const made = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['row.enriched', 'column.completed'] } });
    const project = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } });
    const pid = project.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    const col = await t.api('POST', `/projects/${pid}/columns`, {
      body: { name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    expect(col.status).toBe(201);
    await t.api('POST', `/projects/${pid}/columns/run`, { body: {} });
    await until(() => ep.received.length >= 4);
    await Bun.sleep(500); // nothing more comes
    const events = ep.received.map((r) => new Webhook(made.body.secret).verify(r.body, r.headers) as any);
    const rows = events.filter((e) => e.type === 'row.enriched');
    expect(rows.map((e) => e.data.row.company.Upper.value).sort()).toEqual(['ACME', 'GLOBEX', 'INITECH']);
    expect(rows[0].data).toMatchObject({ project_id: pid, column: 'Upper' });
    const done = events.filter((e) => e.type === 'column.completed');
    expect(done).toHaveLength(1);
    expect(done[0].data).toMatchObject({ project_id: pid, column: 'Upper', rows: 3 });
    expect(events).toHaveLength(4);
    ep.stop();
  });

  test('deliveries to a private address are refused unless ALLOW_PRIVATE_NETWORK opens it; re-send delivers once it does', async () => {
    const ep = endpoint();
    const made = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['builder.completed'] } });
    const closed = setEnv({ ALLOW_PRIVATE_NETWORK: undefined });
    try {
      await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } });
      const [d] = await until(async () => {
        const list = await deliveries(made.body.id);
        return list[0]?.attempts >= 2 ? list : undefined;
      });
      expect(d.status).toBe('pending');
      expect(d.error).toContain('private or reserved address');
      expect(ep.received).toHaveLength(0);
    } finally {
      closed();
    }
    const [d] = await deliveries(made.body.id);
    const again = await t.api('POST', `/webhooks/${made.body.id}/deliveries/${d.id}/resend`);
    expect(again.status).toBe(202);
    await until(() => ep.received[0]);
    expect(ep.received[0]?.headers['webhook-id']).toBe(d.id);
    ep.stop();
  });

  test('bad input: a private, malformed or credentialed URL, an unknown event; another workspace’s webhook is a 404', async () => {
    const closed = setEnv({ ALLOW_PRIVATE_NETWORK: undefined });
    try {
      for (const url of ['http://127.0.0.1:9/x', 'http://10.0.0.8/hook', 'http://localhost/hook']) {
        const r = await t.api('POST', '/webhooks', { body: { url, events: ['row.enriched'] } });
        expect(r.status).toBe(422);
        expect(r.body.detail.message).toContain('private or reserved address');
      }
    } finally {
      closed();
    }
    const before = (await t.api('GET', '/webhooks')).body.webhooks.length;
    const bad = [
      { url: 'not a url', events: ['row.enriched'] },
      { url: 'ftp://example.com/x', events: ['row.enriched'] },
      { url: 'https://user:pw@example.com/x', events: ['row.enriched'] },
      { url: 'https://example.com/x', events: ['row.deleted'] },
      { url: 'https://example.com/x', events: [] },
    ];
    for (const body of bad) {
      const r = await t.api('POST', '/webhooks', { body });
      expect(r.status).toBe(422);
      expect(r.body.detail).toBeDefined();
    }
    expect((await t.api('GET', '/webhooks')).body.webhooks.length).toBe(before); // nothing made

    const mine = (await t.api('GET', '/webhooks')).body.webhooks[0];
    const other = await t.newWorkspace();
    const as = { headers: { 'service-api-key': other.key } };
    expect((await t.api('GET', `/webhooks/${mine.id}/deliveries`, as)).status).toBe(404);
    expect((await t.api('POST', `/webhooks/${mine.id}/deliveries/msg_x/resend`, as)).status).toBe(404);
    expect((await t.api('DELETE', `/webhooks/${mine.id}`, as)).status).toBe(404);
    expect((await t.api('GET', '/webhooks', as)).body.webhooks).toEqual([]);
    // Deleted: gone from the list, its log with it.
    expect((await t.api('DELETE', `/webhooks/${mine.id}`)).status).toBe(200);
    expect((await t.api('GET', `/webhooks/${mine.id}/deliveries`)).status).toBe(404);
  });
});

/** Past the retry window a delivery is given up, and says so; a re-send starts a new window. */
describe.each(DIALECTS)('webhook retry window on %s', (dialect) => {
  let t: TestService;
  let restore: () => void;
  beforeAll(async () => {
    restore = setEnv({ ALLOW_PRIVATE_NETWORK: '127.0.0.1' });
    t = await startTestService(dialect, { WEBHOOK_RETRY_DELAYS_S: '0.3', WEBHOOK_RETRY_WINDOW_S: '1', WEBHOOK_POLL_MS: '50' });
  });
  afterAll(async () => {
    await t.stop();
    restore();
  });

  test('an endpoint down for the whole window: failed, with its last answer; re-sent once it is back', async () => {
    const ep = endpoint();
    ep.answerWith(() => 503);
    const made = await t.api('POST', '/webhooks', { body: { url: ep.url, events: ['builder.completed'] } });
    await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } });
    const [d] = await until(async () => {
      const list = (await t.api('GET', `/webhooks/${made.body.id}/deliveries`)).body.deliveries;
      return list[0]?.status === 'failed' ? list : undefined;
    });
    expect(d.attempts).toBeGreaterThanOrEqual(3);
    expect(d).toMatchObject({ response_status: 503, next_attempt_at: null });
    expect(d.error).toContain('503');
    const tried = ep.received.length;
    ep.answerWith(() => 200);
    await t.api('POST', `/webhooks/${made.body.id}/deliveries/${d.id}/resend`);
    await until(async () => (await t.api('GET', `/webhooks/${made.body.id}/deliveries`)).body.deliveries[0]?.status === 'delivered');
    expect(ep.received).toHaveLength(tried + 1);
    ep.stop();
  });
});
