import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestService, type TestService } from './support/test-service.ts';

/** /metrics is served by the REST host, outside BASE_PATH; storage plays no part, so SQLite only. */
describe('METRICS_TOKEN', () => {
  let t: TestService;
  let metrics: string;
  beforeAll(async () => {
    t = await startTestService('sqlite', { METRICS_TOKEN: 'scrape-token-123' });
    metrics = `${new URL(t.url).origin}/metrics`;
  }, 60_000);
  afterAll(() => t.stop());

  test('/metrics answers only the bearer token when one is set', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong',
      'Bearer scrape-token-12',
      'Bearer scrape-token-1234',
      'scrape-token-123',
      'Basic scrape-token-123',
    ]) {
      const res = await fetch(metrics, { headers: authorization ? { authorization } : {} });
      expect([authorization, res.status]).toEqual([authorization, 401]);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      const body = await res.json();
      expect(body.detail).toContain('METRICS_TOKEN');
      expect(JSON.stringify(body)).not.toContain('scrape-token-123');
    }
    const ok = await fetch(metrics, { headers: { authorization: 'Bearer scrape-token-123' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('wfs_queue_waiting_jobs');
  });
});

describe('without METRICS_TOKEN', () => {
  test('/metrics stays open, as before', async () => {
    const t = await startTestService('sqlite');
    try {
      const res = await fetch(`${new URL(t.url).origin}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('wfs_queue_waiting_jobs');
    } finally {
      await t.stop();
    }
  }, 60_000);
});
