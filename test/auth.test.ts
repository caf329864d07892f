import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

describe.each(DIALECTS)('API keys and plans on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  });
  afterAll(() => t.stop());

  test('a request without the service-api-key header is 401 with a detail saying what to send', async () => {
    const r = await t.api('GET', '/projects', { headers: { 'service-api-key': '' } });
    expect(r.status).toBe(401);
    expect(r.body.detail).toContain('service-api-key');
  });

  test('an unknown key is 401', async () => {
    const r = await t.api('GET', '/projects', { headers: { 'service-api-key': 'wfs_00000000_not-a-real-key' } });
    expect(r.status).toBe(401);
    expect(typeof r.body.detail).toBe('string');
  });

  test('a valid key of a pro workspace is accepted', async () => {
    const r = await t.api('GET', '/projects');
    expect(r.status).toBe(200);
  });

  test('a workspace on the free plan gets 403 on every key-protected endpoint', async () => {
    const free = await t.newWorkspace('free');
    for (const [method, path] of [
      ['GET', '/project-builders'],
      ['GET', '/projects'],
      ['POST', '/projects'],
    ] as const) {
      const r = await t.api(method, path, { headers: { 'service-api-key': free.key }, body: method === 'POST' ? {} : undefined });
      expect(r.status).toBe(403);
      expect(r.body.detail).toContain('plan');
    }
  });

  test('a revoked key stops working at once', async () => {
    const ws = await t.newWorkspace('pro');
    expect((await t.api('GET', '/projects', { headers: { 'service-api-key': ws.key } })).status).toBe(200);
    const prefix = ws.key.split('_').slice(0, 2).join('_');
    expect(await t.service.kernel.storage.workspaces.revokeKey(prefix)).toBe(true);
    expect((await t.api('GET', '/projects', { headers: { 'service-api-key': ws.key } })).status).toBe(401);
  });

  test('keys are stored hashed, never in clear', async () => {
    const { db } = (t.service.kernel.storage as unknown as { database: { db: any } }).database;
    const rows = await db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(JSON.stringify(row)).not.toContain(t.key);
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});
