import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { loadConfig } from '../core/config.ts';
import { type RunningService, startService } from '../core/service.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';

const ROOT = resolve(import.meta.dir, '..');

/** Runs `bun run admin ...` as a user would, against DATABASE_URL. */
async function admin(databaseUrl: string, ...args: string[]): Promise<{ code: number; out: any }> {
  const proc = Bun.spawn(['bun', 'run', 'admin', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [text, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, out: JSON.parse(text) };
}

describe.each(DIALECTS)('admin CLI on %s', (dialect) => {
  let databaseUrl: string;
  let service: RunningService;
  const get = (key: string) => fetch(`${service.restUrl}/projects`, { headers: { 'service-api-key': key } });
  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl(dialect);
    service = await startService(loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', BOOTSTRAP_API_KEY: 'boot-key-for-tests', PROVIDER_MODE: 'sandbox' }));
  });
  afterAll(() => service.stop());

  test('workspace:create prints the workspace id and a working key', async () => {
    const { code, out } = await admin(databaseUrl, 'workspace:create', '--name', 'Acme', '--credits', '50');
    expect(code).toBe(0);
    expect(out).toMatchObject({ workspace_id: expect.any(String), name: 'Acme', plan: 'pro', credits: 50 });
    expect(out.api_key).toMatch(/^wfs_[0-9a-f]{8}_/);
    expect((await get(out.api_key)).status).toBe(200);
  });

  test('key:create adds a second key; key:revoke by prefix disables only that one', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Two keys')).out;
    const second = (await admin(databaseUrl, 'key:create', '--workspace', ws.workspace_id)).out;
    expect(second.api_key).not.toBe(ws.api_key);
    const revoked = await admin(databaseUrl, 'key:revoke', '--key', second.key_prefix);
    expect(revoked.out).toEqual({ revoked: true, key_prefix: second.key_prefix });
    expect((await get(second.api_key)).status).toBe(401);
    expect((await get(ws.api_key)).status).toBe(200);
  });

  test('plan:set free locks API access (403) and pro restores it', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Planned')).out;
    expect((await admin(databaseUrl, 'plan:set', '--workspace', ws.workspace_id, '--plan', 'free')).out.plan).toBe('free');
    expect((await get(ws.api_key)).status).toBe(403);
    await admin(databaseUrl, 'plan:set', '--workspace', ws.workspace_id, '--plan', 'pro');
    expect((await get(ws.api_key)).status).toBe(200);
  });

  test('credits:grant adds to the balance', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Rich', '--credits', '10')).out;
    const r = await admin(databaseUrl, 'credits:grant', '--workspace', ws.workspace_id, '--amount', '25');
    expect(r.out).toEqual({ workspace_id: ws.workspace_id, balance: 35 });
  });

  test('credits:ledger lists the entries with the balance; credits:usage exports CSV per plugin', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Spender', '--credits', '40')).out;
    const res = await fetch(`${service.restUrl}/projects`, {
      method: 'POST',
      headers: { 'service-api-key': ws.api_key, 'content-type': 'application/json' },
      body: JSON.stringify({ builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 15 } }),
    });
    expect(res.status).toBe(201);
    await service.kernel.queue.drain();
    const ledger = (await admin(databaseUrl, 'credits:ledger', '--workspace', ws.workspace_id)).out;
    expect(ledger.balance).toBe(25);
    expect(ledger.entries.map((e: any) => [e.kind, e.amount, e.pluginId])).toEqual([
      ['reserve', -15, 'google_maps_search'],
      ['grant', 40, null],
    ]);
    const proc = Bun.spawn(['bun', 'run', 'admin', 'credits:usage', '--workspace', ws.workspace_id, '--csv'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      stdout: 'pipe',
    });
    expect((await new Response(proc.stdout).text()).trim()).toBe('plugin_id,credits\ngoogle_maps_search,15');
  });

  test('mistakes exit 1 with a JSON error that says what to fix', async () => {
    const cases: [string[], string][] = [
      [['workspace:create'], '--name is required'],
      [['plan:set', '--workspace', 'nope', '--plan', 'pro'], 'no workspace nope'],
      [['workspace:create', '--name', 'x', '--plan', 'gold'], '--plan must be one of'],
      [['credits:grant', '--workspace', 'x', '--amount', 'ten'], 'no workspace x'],
      [['frobnicate'], 'unknown command'],
    ];
    for (const [args, message] of cases) {
      const r = await admin(databaseUrl, ...args);
      expect(r.code).toBe(1);
      expect(r.out.error).toContain(message);
    }
  });

  test('BOOTSTRAP_API_KEY creates one pro workspace holding that key, once', async () => {
    expect((await get('boot-key-for-tests')).status).toBe(200);
    const again = await startService(loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', BOOTSTRAP_API_KEY: 'boot-key-for-tests' }));
    await again.stop();
    const { db } = (service.kernel.storage as unknown as { database: { db: any } }).database;
    const defaults = await db.selectFrom('workspaces').selectAll().where('name', '=', 'default').execute();
    expect(defaults).toHaveLength(1);
    expect(defaults[0].plan).toBe('pro');
    expect(await service.kernel.storage.credits.balance(defaults[0].id)).toBe(1000);
  });
});
