import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Cluster, startCluster } from '../scripts/cluster/cluster.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { type FakeServer, startFakeServer } from './support/fake-providers.ts';
import type { RedisNode } from './support/sentinel.ts';

/**
 * Redis Sentinel failover under load (docs/operations.md, "Redis Sentinel"): the reference cluster
 * (nginx, an API and an MCP process, two workers, MariaDB) on a Redis primary, a replica and three
 * sentinels. During an enrichment of 2,000 rows by a paid tool calling a provider on loopback,
 * while clients keep adding rows through REST and MCP, replication to the replica is cut and the
 * primary killed with SIGKILL: the jobs it acknowledged last are not on the replica Sentinel
 * promotes (what asynchronous replication loses when it lags). The outbox hands them over again,
 * and the run ends as if nothing happened.
 */

const ROWS = 2_000;
/** Each provider call takes this long, so that the run is still going when the primary dies. */
const PROVIDER_MS = 400;
const PRICE = 1;

let cluster: Cluster;
let provider: FakeServer;
let mcp: Client;

const providerValue = (key: string) => `found:${key.split('').reverse().join('')}`;

beforeAll(async () => {
  provider = startFakeServer({
    'POST /lookup': async (r) => {
      await Bun.sleep(PROVIDER_MS);
      return Response.json({ values: (r.body.keys as string[]).map(providerValue) });
    },
  });
  cluster = await startCluster({
    apis: 1,
    mcps: 1,
    workers: 2,
    sentinel: true,
    env: {
      PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/plugins'),
      // The provider listens on loopback.
      ALLOW_PRIVATE_NETWORK: '1',
      BOOTSTRAP_CREDITS: '100000',
      PLANS_JSON: JSON.stringify({ pro: { requestsPerMinute: null } }),
    },
  });
  mcp = await connect(cluster.mcpUrl, { 'service-api-key': cluster.apiKey });
}, 120_000);

afterAll(async () => {
  await mcp?.close();
  await cluster?.stop();
  provider?.stop();
});

/** One answer a client saw: when it was asked (ms since epoch), how long it took, its status. */
interface Seen {
  door: 'rest' | 'mcp';
  at: number;
  ms: number;
  status: number;
  retryAfter: string | null;
}

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; seen: Seen }> {
  const at = Date.now();
  const res = await fetch(`${cluster.restUrl}${path}`, {
    method,
    headers: { 'service-api-key': cluster.apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const seen: Seen = { door: 'rest', at, ms: Date.now() - at, status: res.status, retryAfter: res.headers.get('retry-after') };
  return { status: res.status, body: text ? JSON.parse(text) : null, seen };
}

async function mcpCall(name: string, args: Record<string, unknown>): Promise<{ ok: boolean; data: any; seen: Seen }> {
  const at = Date.now();
  const envelope = await call(mcp, name, args);
  const status = envelope.ok ? 200 : Number(envelope.status_code ?? 500);
  return { ok: envelope.ok, data: envelope.data, seen: { door: 'mcp', at, ms: Date.now() - at, status, retryAfter: null } };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/**
 * Clients adding rows one at a time, through REST and MCP in turn, and reading the project: every
 * answer is kept, and the names of the rows whose insert was answered 2xx.
 */
function startClients(projectId: string) {
  const seen: Seen[] = [];
  const added: { name: string; answeredAt: number }[] = [];
  let running = true;
  let n = 0;
  const loop = async (door: 'rest' | 'mcp') => {
    while (running) {
      const name = `late-${door}-${++n}`;
      if (door === 'rest') {
        const r = await rest('POST', `/projects/${projectId}/rows`, { company: { Name: name, Key: name } });
        seen.push(r.seen);
        if (r.status < 300) added.push({ name, answeredAt: Date.now() });
        seen.push((await rest('GET', `/projects/${projectId}`)).seen);
      } else {
        const r = await mcpCall('add_rows', { project_id: projectId, rows_json: JSON.stringify([{ Name: name, Key: name }]) });
        seen.push(r.seen);
        if (r.ok) added.push({ name, answeredAt: Date.now() });
        seen.push((await mcpCall('get_project', { project_id: projectId })).seen);
      }
      await Bun.sleep(20);
    }
  };
  const loops = [loop('rest'), loop('mcp')];
  return {
    seen,
    added,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Every row of the project, through the REST listing a user pages through. */
async function allRows(projectId: string): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const r = await rest('GET', `/projects/${projectId}/rows?page=${page}&page_size=100`);
    expect(r.status).toBe(200);
    rows.push(...r.body.rows);
    if (page >= r.body.total_pages) return rows;
  }
}

const logsSay = (text: string) =>
  readdirSync(cluster.logDir).some((f) => f.endsWith('.log') && readFileSync(join(cluster.logDir, f), 'utf8').includes(text));

test('kill -9 of the Redis primary mid-enrichment, its last writes lost: Sentinel promotes the replica, the outbox hands the lost jobs over again, every row and cell once, credits as undisturbed', async () => {
  const sentinel = cluster.sentinel as NonNullable<Cluster['sentinel']>;
  const csv = ['Name,Key', ...Array.from({ length: ROWS }, (_, i) => `Company ${i},key-${i}`)].join('\n');
  const created = await rest('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv } });
  expect(created.status).toBe(201);
  const projectId = created.body.project_id as string;
  await until('the import', async () => {
    const p = await rest('GET', `/projects/${projectId}`);
    return p.body.builder_status?.type === 'completed' ? true : undefined;
  });
  const column = await rest('POST', `/projects/${projectId}/columns`, {
    name: 'Found',
    tool_id: 'http_lookup',
    config: { url: `${provider.url}/lookup`, key: '{{Key}}' },
    auto_run: true,
  });
  expect(column.status).toBe(201);
  const colId = column.body.col_id as string;
  const before = (await rest('GET', '/credits')).body.balance as number;

  const progress = async () => (await rest('GET', `/projects/${projectId}/columns/progress`)).body.columns[0];
  expect((await rest('POST', `/projects/${projectId}/columns/run`, { col_ids: [colId] })).status).toBe(200);
  const clients = startClients(projectId);
  await until('a quarter of the run done', async () => ((await progress()).completed >= ROWS / 4 ? true : undefined));

  // Replication stops; the clients' rows keep coming, their jobs acknowledged by the primary alone.
  await sentinel.cutReplication();
  const cutAt = Date.now();
  await until('rows added after the cut', async () => (clients.added.filter((a) => a.answeredAt > cutAt).length >= 10 ? true : undefined));
  expect(await sentinel.replicationGap()).toBeGreaterThan(0);
  const lostRows = clients.added.filter((a) => a.answeredAt > cutAt).length;
  const old: RedisNode = await sentinel.killPrimary();
  const killedAt = Date.now();
  const promoted = await sentinel.waitForPromotion(old);
  const promotedAt = Date.now();
  expect(promoted.port).not.toBe(old.port);
  await Bun.sleep(3_000); // the clients go on a while on the new primary
  await clients.stop();

  // The run ends: every cell settled, the lost jobs included.
  const expectedRows = ROWS + clients.added.length;
  let last: any;
  const done = await until('every cell settled (a job lost in the failover leaves its cells queued)', async () => {
    last = await progress();
    const p = last;
    return p.total === expectedRows && p.completed + p.error + p.no_result === p.total && p.queued + p.running === 0 ? p : undefined;
  }).catch((e: Error) => {
    throw new Error(`${e.message}; the cells now: ${JSON.stringify(last)}`);
  });
  expect(done.completed).toBe(expectedRows);

  // Every row exactly once, every cell with its provider's value.
  const rows = await allRows(projectId);
  const names = rows.map((r) => r.company.Name.value as string);
  expect(new Set(names).size).toBe(names.length);
  expect(names.length).toBe(expectedRows);
  for (const a of clients.added) expect(names).toContain(a.name);
  const wrong = rows.filter((r) => r.company.Found.status !== 'completed' || r.company.Found.value !== providerValue(r.company.Key.value));
  expect(wrong).toEqual([]);

  // Credits: one charge per row, as the same run undisturbed (a job run again under its id is not charged again).
  const after = (await rest('GET', '/credits')).body.balance as number;
  expect(before - after).toBe(expectedRows * PRICE);

  // The clients: no 500; an answer through each door within 2 s of the fault; a 503 (with
  // Retry-After) only while no Redis could take a write.
  const seen = clients.seen;
  expect(seen.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
  const unavailable = seen.filter((s) => s.status === 503);
  // REST says when to come back (MCP carries the 503 in its envelope).
  expect(unavailable.filter((s) => s.door === 'rest' && !s.retryAfter)).toEqual([]);
  expect(unavailable.filter((s) => s.at < killedAt - 100 || s.at > promotedAt)).toEqual([]);
  for (const door of ['rest', 'mcp'] as const) {
    const answered = seen.filter((s) => s.door === door && s.at >= killedAt && s.status < 300).map((s) => s.at + s.ms);
    expect(Math.min(...answered) - killedAt).toBeLessThan(2_000);
    // Asked while the primary was away, no request waited for it.
    const during = seen.filter((s) => s.door === door && s.at >= killedAt + 100 && s.at <= promotedAt);
    expect(during.filter((s) => s.ms >= 2_000)).toEqual([]);
  }

  // The gap was real, and the operator reads in the log what made up for it.
  expect(lostRows).toBeGreaterThanOrEqual(10);
  expect(logsSay('handed over again the jobs it took lately')).toBe(true);
}, 150_000);
