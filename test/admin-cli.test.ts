import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { loadConfig } from '../core/config.ts';
import { type RunningService, startService } from '../app/service.ts';
import { captureLog } from './support/capture-log.ts';
import { admin } from './support/admin-cli.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';

const ROOT = resolve(import.meta.dir, '..');
const MAX = Number.MAX_SAFE_INTEGER;

/** Runs `fn` with the log at info level and answers what it wrote, as parsed JSON lines. */
const logLines = async (fn: () => Promise<void>): Promise<any[]> => (await captureLog(fn)).lines;

describe.each(DIALECTS)('admin CLI on %s', (dialect) => {
  let databaseUrl: string;
  let service: RunningService;
  const get = (key: string) => fetch(`${service.restUrl}/projects`, { headers: { 'service-api-key': key } });
  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl(dialect);
    service = await startService(
      loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', BOOTSTRAP_API_KEY: 'boot-key-for-tests', PROVIDER_MODE: 'sandbox' }),
    );
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

  test('workspace:create grants 1000 credits unless --credits says otherwise, so the walkthrough can create a project', async () => {
    const acme = await admin(databaseUrl, 'workspace:create', '--name', 'Acme');
    expect(acme.out.credits).toBe(1000);
    const post = (key: string) =>
      fetch(`${service.restUrl}/projects`, {
        method: 'POST',
        headers: { 'service-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ builder_id: 'google_maps_search', form_data: { query: 'dentists in Lyon', max_results: 20 } }),
      });
    expect((await post(acme.out.api_key)).status).toBe(201);
    const broke = await admin(databaseUrl, 'workspace:create', '--name', 'Broke', '--credits', '0');
    expect([broke.code, broke.out.credits]).toEqual([0, 0]);
    expect((await post(broke.out.api_key)).status).toBe(402);
    const bad = await admin(databaseUrl, 'workspace:create', '--name', 'Bad', '--credits=-1');
    expect(bad.code).toBe(1);
    expect(bad.out.error).toContain('--credits must be a whole number of credits from 0 to');
  });

  test('credits:grant takes only a positive safe integer, in either flag form', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Granted', '--credits', '5')).out;
    for (const args of [
      ['--amount', '0'],
      ['--amount=-999999'],
      ['--amount', '-5'],
      ['--amount', '1.5'],
      ['--amount', 'ten'],
      ['--amount', '1e3'],
      ['--amount', String(MAX + 1)],
      ['--amount', '99999999999999999999'],
    ]) {
      const r = await admin(databaseUrl, 'credits:grant', '--workspace', ws.workspace_id, ...args);
      expect([args, r.code]).toEqual([args, 1]);
      expect(r.out.error).toContain(`--amount must be a whole number of credits from 1 to ${MAX}`);
    }
    expect(await service.kernel.storage.credits.balance(ws.workspace_id)).toBe(5);
    expect((await admin(databaseUrl, 'credits:grant', '--workspace', ws.workspace_id, '--amount=7')).out.balance).toBe(12);
  });

  test('a balance never passes the largest safe integer: the grant is refused, nothing written', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Whale', '--credits', String(MAX - 10))).out;
    const over = await admin(databaseUrl, 'credits:grant', '--workspace', ws.workspace_id, '--amount', '11');
    expect(over.code).toBe(1);
    expect(over.out.error).toBe(`refused: the balance is ${MAX - 10}; adding 11 would pass the largest balance allowed (${MAX})`);
    expect((await admin(databaseUrl, 'credits:grant', '--workspace', ws.workspace_id, '--amount', '10')).out.balance).toBe(MAX);
    const up = await admin(databaseUrl, 'credits:adjust', '--workspace', ws.workspace_id, '--amount', '1', '--reason', 'too much');
    expect(up.code).toBe(1);
    expect(up.out.error).toContain(`the balance is ${MAX}`);
    const ledger = (await admin(databaseUrl, 'credits:ledger', '--workspace', ws.workspace_id)).out;
    expect(ledger.balance).toBe(MAX);
    expect(ledger.entries.map((e: any) => e.amount)).toEqual([10, MAX - 10]);
  });

  test('credits:adjust corrects the balance either way, with its reason in the ledger, never below zero', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Corrected', '--credits', '100')).out;
    const down = await admin(
      databaseUrl,
      'credits:adjust',
      '--workspace',
      ws.workspace_id,
      '--amount',
      '-30',
      '--reason',
      'double grant on 2026-11-02',
    );
    expect(down.out).toEqual({ workspace_id: ws.workspace_id, adjusted: -30, reason: 'double grant on 2026-11-02', balance: 70 });
    expect(
      (await admin(databaseUrl, 'credits:adjust', '--workspace', ws.workspace_id, '--amount=5', '--reason', 'goodwill')).out.balance,
    ).toBe(75);
    const tooMuch = await admin(databaseUrl, 'credits:adjust', '--workspace', ws.workspace_id, '--amount=-76', '--reason', 'oops');
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.out.error).toBe('refused: the balance is 75; adjusting by -76 would take it below zero');
    expect(
      (await admin(databaseUrl, 'credits:adjust', '--workspace', ws.workspace_id, '--amount=-75', '--reason', 'close the account')).out
        .balance,
    ).toBe(0);
    const ledger = (await admin(databaseUrl, 'credits:ledger', '--workspace', ws.workspace_id)).out;
    expect(ledger.balance).toBe(0);
    expect(ledger.entries.map((e: any) => [e.kind, e.amount, e.note])).toEqual([
      ['adjust', -75, 'close the account'],
      ['adjust', 5, 'goodwill'],
      ['adjust', -30, 'double grant on 2026-11-02'],
      ['grant', 100, 'workspace:create'],
    ]);
    const cases: [string[], string][] = [
      [['--amount', '-5'], '--reason is required'],
      [['--amount', '-5', '--reason', '   '], '--reason must say why'],
      [['--amount', '-5', '--reason', 'x'.repeat(256)], '--reason must be at most 255 characters'],
      [['--amount', '0', '--reason', 'x'], '--amount must be a non-zero whole number of credits'],
      [['--amount', '2.5', '--reason', 'x'], '--amount must be a non-zero whole number of credits'],
      [['--amount', `-${MAX + 1}`, '--reason', 'x'], '--amount must be a non-zero whole number of credits'],
    ];
    for (const [args, message] of cases) {
      const r = await admin(databaseUrl, 'credits:adjust', '--workspace', ws.workspace_id, ...args);
      expect([args, r.code]).toEqual([args, 1]);
      expect(r.out.error).toContain(message);
    }
  });

  test('adjustments check the balance in the same transaction as the write: concurrent ones never overdraw', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Raced', '--credits', '10')).out;
    const credits = service.kernel.storage.credits;
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => credits.adjust(ws.workspace_id, -3, { note: 'race' })));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    expect(outcomes.filter((o) => !o.ok).every((o) => !o.ok && o.reason === 'negative' && o.balance === 1)).toBe(true);
    expect(await credits.balance(ws.workspace_id)).toBe(1);
    expect((await credits.entries(ws.workspace_id, 100)).reduce((sum, e) => sum + e.amount, 0)).toBe(1);
  });

  test('key:list shows each key by prefix with its creation time and whether it is revoked, never a secret', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Listed')).out;
    const second = (await admin(databaseUrl, 'key:create', '--workspace', ws.workspace_id)).out;
    await admin(databaseUrl, 'key:revoke', '--key', ws.api_key);
    const proc = Bun.spawn(['bun', 'run', 'admin', 'key:list', '--workspace', ws.workspace_id], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      stdout: 'pipe',
    });
    const text = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const out = JSON.parse(text);
    expect(out).toEqual({
      workspace_id: ws.workspace_id,
      keys: [
        {
          key_prefix: ws.key_prefix,
          created_at: expect.any(String),
          revoked: true,
          revoked_at: expect.any(String),
          created_by: null,
          last_used_at: null,
          monthly_credits: null,
        },
        {
          key_prefix: second.key_prefix,
          created_at: expect.any(String),
          revoked: false,
          revoked_at: null,
          created_by: null,
          last_used_at: null,
          monthly_credits: null,
        },
      ],
    });
    expect(Date.parse(out.keys[0].created_at)).toBeGreaterThan(Date.now() - 60_000);
    for (const secret of [ws.api_key, second.api_key]) expect(text).not.toContain(secret.slice(13));
    expect(text).not.toMatch(/[0-9a-f]{64}/); // no hash either
    expect((await admin(databaseUrl, 'key:list', '--workspace', 'nope')).out.error).toContain('no workspace nope');
  });

  test('key:revoke takes the whole key or its prefix; a wrong secret revokes nothing', async () => {
    const ws = (await admin(databaseUrl, 'workspace:create', '--name', 'Revoked')).out;
    const typo = `${ws.api_key.slice(0, -3)}xyz`;
    const wrong = await admin(databaseUrl, 'key:revoke', '--key', typo);
    expect(wrong.code).toBe(1);
    expect(wrong.out.error).toContain(`revoke by its prefix: --key ${ws.key_prefix}`);
    expect(wrong.out.error).not.toContain(typo.slice(13));
    expect((await get(ws.api_key)).status).toBe(200);
    expect((await admin(databaseUrl, 'key:revoke', '--key', ws.api_key)).out).toEqual({ revoked: true, key_prefix: ws.key_prefix });
    expect((await get(ws.api_key)).status).toBe(401);
    const again = await admin(databaseUrl, 'key:revoke', '--key', ws.key_prefix);
    expect([again.code, again.out.error]).toEqual([1, `no live key with prefix ${ws.key_prefix} (unknown, or revoked already)`]);
    const unknown = await admin(databaseUrl, 'key:revoke', '--key', 'not-a-key-we-know');
    expect(unknown.code).toBe(1);
    expect(unknown.out.error).not.toContain('not-a-key-we-know');
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

  test('the bootstrap key is revoked the documented way (key:revoke --key <the key>) and stays revoked on restart', async () => {
    const started = await logLines(async () => {
      const again = await startService(
        loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', BOOTSTRAP_API_KEY: 'boot-key-for-tests', WORKERS: '0', SERVE: 'rest' }),
      );
      await again.stop();
    });
    const ready = started.find((l) => l.msg === 'bootstrap key ready');
    const { workspace_id, key_prefix } = ready ?? {};
    expect(workspace_id).toEqual(expect.any(String));
    expect(key_prefix).toMatch(/^boot_[0-9a-f]{8}$/);
    expect(JSON.stringify(started)).not.toContain('boot-key-for-tests');
    const listed = (await admin(databaseUrl, 'key:list', '--workspace', workspace_id)).out;
    expect(listed.keys).toEqual([expect.objectContaining({ key_prefix, revoked: false })]);

    const revoked = await admin(databaseUrl, 'key:revoke', '--key', 'boot-key-for-tests');
    expect(revoked.out).toEqual({ revoked: true, key_prefix });
    expect((await get('boot-key-for-tests')).status).toBe(401);

    const restarted = await logLines(async () => {
      const again = await startService(
        loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', BOOTSTRAP_API_KEY: 'boot-key-for-tests', WORKERS: '0', SERVE: 'rest' }),
      );
      await again.stop();
    });
    const warning = restarted.find((l) => l.msg.startsWith('bootstrap key is revoked'));
    expect([warning?.level, warning?.key_prefix]).toEqual(['warn', key_prefix]);
    expect((await get('boot-key-for-tests')).status).toBe(401);
  });
});
