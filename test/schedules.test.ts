import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { checkCron } from '../core/schedules/cron.ts';
import { setEnv } from './plugins/enrich-helpers.ts';
import { type Dialect, DIALECTS, freshDatabaseUrl } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';
import { until } from './support/until.ts';

/**
 * Schedules (docs/enrichment.md): the builder runs again on a cron schedule, adding only new rows, never
 * two runs at once, and goes on after a restart. The source is a stand-in for Google Places whose
 * results grow between runs (1 credit per row written).
 */
describe.each(DIALECTS)('schedules on %s', (dialect: Dialect) => {
  let t: TestService;
  let databaseUrl: string;
  let restore: () => void;
  const places: string[] = ['Alpha', 'Bravo', 'Charlie'];
  let delayMs = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  let source: ReturnType<typeof Bun.serve>;
  let ws: { workspaceId: string; key: string };
  let pid: string;
  const env = { PROVIDER_MODE: 'live', SCHEDULE_MIN_INTERVAL_S: '1', SCHEDULE_POLL_MS: '100' };
  const as = () => ({ headers: { 'service-api-key': ws.key } });
  const api = (method: string, path: string, init: { body?: unknown } = {}) => t.api(method, path, { ...init, ...as() });
  const names = async () => ((await api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows as any[]).map((r) => r.company.Name.value);
  const schedule = async () => (await api('GET', `/projects/${pid}/schedule`)).body;
  const steps = async () => ((await api('GET', `/projects/${pid}`)).body.lead_gen_execution_log as any[]).map((e) => e.step);

  beforeAll(async () => {
    source = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch() {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await Bun.sleep(delayMs);
        inFlight--;
        return Response.json({ places: places.map((name) => ({ displayName: { text: name } })) });
      },
    });
    restore = setEnv({ GOOGLE_MAPS_API_KEY: 'k', GOOGLE_MAPS_BASE_URL: `http://127.0.0.1:${source.port}`, ALLOW_PRIVATE_NETWORK: '1' });
    databaseUrl = await freshDatabaseUrl(dialect);
    t = await startTestService(dialect, { ...env, DATABASE_URL: databaseUrl });
    ws = await t.newWorkspace('pro', 100);
    const made = await api('POST', '/projects', {
      body: { builder_id: 'google_maps_search', form_data: { query: 'dentists', max_results: 20 } },
    });
    pid = made.body.project_id;
    await waitForBuilder({ ...t, api: (m, path, init) => t.api(m, path, { ...init, ...as() }) }, pid);
  });
  afterAll(async () => {
    await t.stop();
    source.stop(true);
    restore();
  });

  test('bad input is a 422 (or 404) with a detail, and no schedule is set', async () => {
    const put = (body: unknown) => api('PUT', `/projects/${pid}/schedule`, { body });
    const noKey = await put({ cron: '0 7 * * *', timezone: 'UTC' });
    expect(noKey.status).toBe(422);
    expect(noKey.body.detail.message).toContain('unique_columns');
    await api('PUT', `/projects/${pid}/settings`, { body: { unique_columns: ['Name'] } });
    const cases: [unknown, string][] = [
      [{ cron: 'every morning', timezone: 'UTC' }, 'Invalid cron'],
      [{ cron: '61 * * * *', timezone: 'UTC' }, 'Invalid cron'],
      [{ cron: '0 7 * * *', timezone: 'Mars/Olympus' }, 'Unknown timezone'],
      [{ timezone: 'UTC' }, 'cron'],
    ];
    for (const [body, words] of cases) {
      const r = await put(body);
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body.detail)).toContain(words);
    }
    // Too often for the operator's SCHEDULE_MIN_INTERVAL_S (default 300): every minute is refused.
    expect(() => checkCron({ cron: '* * * * *', timezone: 'UTC' }, 300_000)).toThrow('at most every 300 s');
    expect(() => checkCron({ cron: '0,59 6,7 * * *', timezone: 'UTC' }, 300_000)).toThrow('runs every 60 s');
    const other = await t.newWorkspace();
    const theirs = await t.api('PUT', `/projects/${pid}/schedule`, {
      body: { cron: '0 7 * * *' },
      headers: { 'service-api-key': other.key },
    });
    expect(theirs.status).toBe(404);
    expect((await api('GET', `/projects/${pid}/schedule`)).status).toBe(404);
  });

  test('each due time runs the builder again and adds only the new rows, paying only for them', async () => {
    expect(await names()).toEqual(['Alpha', 'Bravo', 'Charlie']);
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(97);
    places.push('Delta', 'Echo');
    const set = await api('PUT', `/projects/${pid}/schedule`, { body: { cron: '* * * * * *', timezone: 'Europe/Paris' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ cron: '* * * * * *', timezone: 'Europe/Paris', last_run_at: null, last_outcome: null });
    expect(Date.parse(set.body.next_run_at) - Date.now()).toBeLessThanOrEqual(1_000);
    await until(async () => (await names()).length === 5);
    expect(await names()).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']);
    const s = await until(async () => {
      const got = await schedule();
      return got.last_outcome === 'started' && got;
    });
    expect(Date.parse(s.next_run_at)).toBeGreaterThan(Date.parse(s.last_run_at));
    expect(await steps()).toContain('scheduled');
    await until(async () => (await api('GET', `/projects/${pid}`)).body.builder_status.type === 'completed');
    // Runs that found nothing new keep the rows and the balance: 2 new rows, 2 credits.
    await Bun.sleep(1_500);
    expect(await names()).toHaveLength(5);
    await until(async () => (await api('GET', `/projects/${pid}`)).body.builder_status.type === 'completed');
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(95);
  });

  test('a run still going when the next time is due: that time is skipped, never two runs at once', async () => {
    delayMs = 2_500;
    mostInFlight = 0;
    const skipped = await until(async () => {
      const got = await schedule();
      return got.last_outcome?.startsWith('skipped') && got;
    }, 15_000);
    expect(skipped.last_outcome).toBe('skipped: the previous run was still going');
    await Bun.sleep(2_000);
    expect(mostInFlight).toBe(1);
    delayMs = 0;
  });

  test('the schedule survives a restart; DELETE stops it', async () => {
    await t.stop();
    places.push('Foxtrot');
    t = await startTestService(dialect, { ...env, DATABASE_URL: databaseUrl });
    expect((await schedule()).cron).toBe('* * * * * *');
    await until(async () => (await names()).includes('Foxtrot'));
    expect(await names()).toHaveLength(6);
    expect((await api('DELETE', `/projects/${pid}/schedule`)).body).toEqual({ deleted: true });
    await until(async () => !['queued', 'running'].includes((await api('GET', `/projects/${pid}`)).body.builder_status.type));
    const scheduled = (await steps()).filter((s) => s === 'scheduled').length;
    places.push('Golf');
    await Bun.sleep(1_500);
    expect((await steps()).filter((s) => s === 'scheduled').length).toBe(scheduled);
    expect(await names()).not.toContain('Golf');
    expect((await api('GET', `/projects/${pid}/schedule`)).status).toBe(404);
  });
});

/** Near the plan's rows per project, rows the project holds already take no room: the new ones still come in. */
describe.each(DIALECTS)('a scheduled run near the row limit on %s', (dialect: Dialect) => {
  test('4 of 5 rows held, the source sends them again plus 1 new: the new row is written, no limit warning', async () => {
    const places = ['Alpha', 'Bravo', 'Charlie', 'Delta'];
    const source = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => Response.json({ places: places.map((name) => ({ displayName: { text: name } })) }),
    });
    const restore = setEnv({
      GOOGLE_MAPS_API_KEY: 'k',
      GOOGLE_MAPS_BASE_URL: `http://127.0.0.1:${source.port}`,
      ALLOW_PRIVATE_NETWORK: '1',
    });
    const t = await startTestService(dialect, {
      PROVIDER_MODE: 'live',
      SCHEDULE_MIN_INTERVAL_S: '1',
      SCHEDULE_POLL_MS: '100',
      PLANS_JSON: JSON.stringify({ small: { apiAccess: true, maxRowsPerProject: 5, requestsPerMinute: null } }),
    });
    try {
      const ws = await t.newWorkspace('small', 100);
      const as = { headers: { 'service-api-key': ws.key } };
      const made = await t.api('POST', '/projects', {
        ...as,
        body: { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 20 } },
      });
      const pid = made.body.project_id;
      await waitForBuilder({ ...t, api: (m, path, init) => t.api(m, path, { ...init, ...as }) }, pid);
      await t.api('PUT', `/projects/${pid}/settings`, { ...as, body: { unique_columns: ['Name'] } });
      places.push('Echo');
      await t.api('PUT', `/projects/${pid}/schedule`, { ...as, body: { cron: '* * * * * *' } });
      const rows = async () => (await t.api('GET', `/projects/${pid}/rows`, as)).body.rows.map((r: any) => r.company.Name.value);
      await until(async () => (await rows()).length === 5);
      await t.api('DELETE', `/projects/${pid}/schedule`, as);
      await until(async () => (await t.api('GET', `/projects/${pid}`, as)).body.builder_status.type === 'completed');
      const project = (await t.api('GET', `/projects/${pid}`, as)).body;
      expect(await rows()).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']);
      const lastRun = project.lead_gen_execution_log.slice(project.lead_gen_execution_log.map((e: any) => e.step).lastIndexOf('scheduled'));
      expect(lastRun.some((e: any) => e.step === 'warning')).toBe(false);
    } finally {
      await t.stop();
      source.stop(true);
      restore();
    }
  });
});
