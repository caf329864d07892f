import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { enrichmentJobs } from '../core/services/row-insert.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';
import { until } from './support/until.ts';

/**
 * One job holds a tool cell at a time (docs/decisions.md). A column that reads other tool columns gets
 * a job from each of them for the same cells (and one of its own), so two jobs may come for cells one
 * of them is running, or holding for its retry: the second must leave them alone. Else the provider is
 * asked twice for each row and each row is charged twice (seen on MariaDB + Redis with a verifier
 * column over two finder columns, docs/plugins/provider-tools.md).
 *
 * The provider here is a loopback server that counts what it is asked per row, and holds its answers
 * to the verifier until the test lets them go: the second job comes while the first is inside the
 * provider call, every time.
 */

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/** A provider for http_lookup (POST {keys} → {values}): `/a` and `/b` find, `/verify` checks what they found. */
function startProvider() {
  const asked = new Map<string, number>();
  let release: () => void = () => {};
  let gate: Promise<void> | undefined;
  let failVerify = 0;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const { keys } = (await req.json()) as { keys: string[] };
      if (path === '/verify') {
        for (const k of keys) asked.set(k, (asked.get(k) ?? 0) + 1);
        if (failVerify > 0) {
          failVerify--;
          return Response.json({ error: 'busy' }, { status: 503 });
        }
        if (gate) await gate;
        return Response.json({ values: keys.map((k) => `ok: ${k}`) });
      }
      return Response.json({ values: keys.map((k) => `${path.slice(1)}-${k.toLowerCase()}@example.com`) });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    /** Verifier requests per row (its key), since `forget`. */
    asked,
    /** Requests to /verify so far, all rows counted. */
    verifyCalls: () => [...asked.values()].reduce((a, b) => a + b, 0),
    /** Holds the verifier's answers until `open`. */
    hold() {
      gate = new Promise((r) => {
        release = r;
      });
    },
    open() {
      gate = undefined;
      release();
    },
    /** The next `n` verifier requests answer 503 (retryable). */
    failVerify(n: number) {
      failVerify = n;
    },
    forget: () => asked.clear(),
    stop: () => server.stop(true),
  };
}

describe.each(DIALECTS)('a column reading two tool columns, on %s', (dialect) => {
  let t: TestService;
  let provider: ReturnType<typeof startProvider>;
  let restore: string | undefined;
  beforeAll(async () => {
    restore = process.env.ALLOW_PRIVATE_NETWORK;
    process.env.ALLOW_PRIVATE_NETWORK = '1';
    provider = startProvider();
    // A retry comes 1.5 to 3 s after its failure: time for another job to come meanwhile.
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, JOB_BACKOFF_MS: '3000', ALLOW_PRIVATE_NETWORK: '1' });
  }, 60_000);
  afterAll(async () => {
    await t.stop();
    provider.stop();
    if (restore === undefined) delete process.env.ALLOW_PRIVATE_NETWORK;
    else process.env.ALLOW_PRIVATE_NETWORK = restore;
  });

  const kernel = () => t.service.kernel;
  const balance = () => kernel().storage.credits.balance(t.workspaceId);
  const lookup = (path: string, key: string) => ({ tool_id: 'http_lookup', config: { url: `${provider.url}${path}`, key } });
  const column = async (pid: string, name: string, config: { tool_id: string; config: unknown }, autoRun = false) => {
    const r = await t.api('POST', `/projects/${pid}/columns`, { body: { name, ...config, auto_run: autoRun } });
    expect(r.status).toBe(201);
    return r.body.col_id as string;
  };
  const rowsOf = async (pid: string) => (await t.api('GET', `/projects/${pid}/rows?page_size=100`)).body.rows as any[];
  const statusesOf = async (pid: string, name: string) => (await rowsOf(pid)).map((r) => r.company[name].status as string);
  const settled = (pid: string) =>
    until(async () => {
      const rows = await rowsOf(pid);
      return rows.every((r: any) => Object.values(r.company).every((c: any) => !c.is_loading)) && rows;
    });
  const processed = async () => (await kernel().queue.stats()).processed;

  /**
   * Ada, Grace and Ken; two finder columns filled; a verifier column reading both, not run yet.
   * Answers what the follow-up job a finder column sends for the verifier's cells carries.
   */
  async function twoFindersAndAVerifier() {
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nAda\nGrace\nKen\n' } },
    });
    const pid = made.body.project_id as string;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    const a = await column(pid, 'A', lookup('/a', '{{Name}}'));
    const b = await column(pid, 'B', lookup('/b', '{{Name}}'));
    const v = await column(pid, 'Verified', lookup('/verify', '{{A}} {{B}}'));
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [a, b] } });
    await settled(pid);
    await kernel().queue.drain({ timeoutMs: 20_000 });
    const project = (await kernel().storage.projects.get(t.workspaceId, pid))!;
    const verifier = (await kernel().storage.projects.columns(project)).find((c) => c.id === v)!;
    const seqs = (await rowsOf(pid)).map((r) => Number(r.id));
    const followUp = () => {
      const [job] = enrichmentJobs(kernel(), project, verifier, seqs);
      return kernel().queue.enqueue(job!.type, job!.payload, { tenant: job!.tenant });
    };
    return { pid, v, followUp };
  }

  const verified = (key: string) => `a-${key}@example.com b-${key}@example.com`;

  test('a job that comes for cells another job is running leaves them to it: one ask and one charge per row', async () => {
    const { pid, v, followUp } = await twoFindersAndAVerifier();
    provider.forget();
    const before = await balance();
    provider.hold();
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [v] } });
    // The first job is inside the provider call for the three rows.
    await until(() => provider.verifyCalls() === 3);
    const done = await processed();
    await followUp();
    // The second job ends having claimed nothing, or (the double run) asks the provider again.
    await until(async () => (await processed()) > done || provider.verifyCalls() > 3);
    provider.open();
    const rows = await settled(pid);
    await kernel().queue.drain({ timeoutMs: 20_000 });

    expect(Object.fromEntries(provider.asked)).toEqual({ [verified('ada')]: 1, [verified('grace')]: 1, [verified('ken')]: 1 });
    expect(before - (await balance())).toBe(3);
    expect(rows.map((r) => r.company.Verified)).toMatchObject(
      ['ada', 'grace', 'ken'].map((k) => ({ status: 'completed', value: `ok: ${verified(k)}` })),
    );
  }, 40_000);

  test('a job that comes while another waits to retry the cells leaves them to its retry: each row is charged once', async () => {
    const { pid, v, followUp } = await twoFindersAndAVerifier();
    provider.forget();
    const before = await balance();
    provider.failVerify(1);
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [v] } });
    // The first attempt paid (1 credit an attempt), was answered 503, and queued its cells again for its retry.
    await until(async () => provider.verifyCalls() === 3 && (await statusesOf(pid, 'Verified')).every((s) => s === 'queued'));
    const done = await processed();
    await followUp();
    await until(async () => (await processed()) > done);
    const rows = await settled(pid);
    await kernel().queue.drain({ timeoutMs: 20_000 });

    // Asked twice per row: the 503, then the retry; the retry does not pay again.
    expect(Object.fromEntries(provider.asked)).toEqual({ [verified('ada')]: 2, [verified('grace')]: 2, [verified('ken')]: 2 });
    expect(before - (await balance())).toBe(3);
    expect(rows.map((r) => r.company.Verified.status)).toEqual(['completed', 'completed', 'completed']);
  }, 40_000);

  test('rows added to auto-run columns: the verifier asks and charges once per row, however its three jobs meet', async () => {
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nSeed\n' } },
    });
    const pid = made.body.project_id as string;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`);
    await column(pid, 'A', lookup('/a', '{{Name}}'), true);
    await column(pid, 'B', lookup('/b', '{{Name}}'), true);
    await column(pid, 'Verified', lookup('/verify', '{{A}} {{B}}'), true);
    provider.forget();
    const before = await balance();
    const names: string[] = [];
    // Each round's rows start three jobs at once (A, B and the verifier), and A and B each send the verifier one more.
    for (let round = 0; round < 8; round++) {
      const batch = [`R${round}x`, `R${round}y`, `R${round}z`];
      names.push(...batch);
      const added = await t.api('POST', `/projects/${pid}/rows/batch`, { body: { rows: batch.map((Name) => ({ Name })) } });
      expect(added.status).toBe(201);
      await settled(pid);
    }
    await kernel().queue.drain({ timeoutMs: 20_000 });
    expect(Object.fromEntries(provider.asked)).toEqual(Object.fromEntries(names.map((n) => [verified(n.toLowerCase()), 1])));
    // A, B and the verifier: 1 credit each per row.
    expect(before - (await balance())).toBe(names.length * 3);
  }, 60_000);
});
