import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect } from './mcp/mcp-support.ts';
import { type DoorWatch, faultBreaches, watchDoors } from './support/door-watch.ts';
import { type FakeServer, startFakeServer } from './support/fake-providers.ts';
import { type GaleraService, startGaleraService } from './support/galera-service.ts';
import { allRows, csvProject, progress, type Rest, restClient, until } from './support/rest-steps.ts';

/**
 * A Galera node killed with SIGKILL during an enrichment (docs/operations.md, "MariaDB Galera
 * Cluster"): three nodes, two API processes, an MCP process and two workers spread over them (each
 * DATABASE_URL lists every node, its own first). A paid tool calls a provider on loopback for 5,000
 * rows; a quarter in, the node that one API process and one worker write to dies, while clients
 * keep reading and adding rows through both APIs and MCP. The node comes back (IST) and catches up.
 */

const ROWS = 5_000;
const PRICE = 1; // http_lookup: 1 credit per attempt, one attempt per cell when nothing fails
/** Each provider call takes this long, so that the run is still going when the node dies. */
const PROVIDER_MS = 40;
/** api-1 and worker-0 write to node 2 (scripts/cluster/database.ts). */
const KILLED = 1;

let s: GaleraService;
let provider: FakeServer;
let mcp: Client;
/** The clients of the test, stopped in afterAll too when the test fails half-way. */
let clients: DoorWatch | undefined;
let rest: Rest;

const providerValue = (key: string) => `found:${key.split('').reverse().join('')}`;

// Out of the default run until a cluster's start holds on a busy 2-core machine: in one run on the
// final head a node stayed Donor/Desynced after the joiners' state transfers, for 300 s.
// GALERA_TESTS=1 runs them (docs/operations.md, README "Tests").
const RUN = Boolean(process.env.GALERA_TESTS);

beforeAll(async () => {
  if (!RUN) return;
  provider = startFakeServer({
    'POST /lookup': async (r) => {
      await Bun.sleep(PROVIDER_MS);
      return Response.json({ values: (r.body.keys as string[]).map(providerValue) });
    },
  });
  s = await startGaleraService({ credits: 1_000_000 });
  rest = restClient(s.rest[0] as string, s.key);
  mcp = await connect(s.mcpUrl, { 'service-api-key': s.key });
}, 400_000);

afterAll(async () => {
  await clients?.stop();
  await mcp?.close();
  await s?.stop();
  provider?.stop();
});

test.skipIf(!RUN)(
  'kill -9 of a Galera node mid-enrichment: every row and cell once and right, credits as undisturbed, no 500, every door answering within 2 s; the node rejoins and holds every row',
  async () => {
    const csv = ['Name,Key', ...Array.from({ length: ROWS }, (_, i) => `Company ${i},key-${i}`)].join('\n');
    const projectId = await csvProject(rest, 'enriched', csv);
    const sideId = await csvProject(rest, 'client writes', 'Name\nfirst');
    const column = await rest('POST', `/projects/${projectId}/columns`, {
      name: 'Found',
      tool_id: 'http_lookup',
      config: { url: `${provider.url}/lookup`, key: '{{Key}}' },
    });
    expect(column.status).toBe(201);
    const before = (await rest('GET', '/credits')).body.balance as number;
    expect((await rest('POST', `/projects/${projectId}/columns/run`, { col_ids: [column.body.col_id] })).status).toBe(200);

    const watch = watchDoors(s.rest, s.key, mcp, projectId, sideId);
    clients = watch;
    await until('a quarter of the cells done', async () => ((await progress(rest, projectId)).completed >= ROWS / 4 ? true : undefined));
    const doneAtKill = (await progress(rest, projectId)).completed as number;
    await s.galera.kill(KILLED);
    const killedAt = Date.now();
    await Bun.sleep(5_000);
    const restartedAt = Date.now();
    const rejoining = s.galera.restart(KILLED);

    let last: Record<string, number> = {};
    await until('every cell settled', async () => {
      last = await progress(rest, projectId);
      return last.total === ROWS && (last.completed ?? 0) + (last.error ?? 0) + (last.no_result ?? 0) === ROWS ? true : undefined;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; the cells now: ${JSON.stringify(last)}`);
    });
    await rejoining;
    await watch.stop();
    expect(doneAtKill).toBeLessThan(ROWS); // the node died mid-run

    // Every row exactly once, every cell completed with its provider's value.
    const rows = await allRows(rest, projectId);
    const names = rows.map((r) => r.company.Name.value as string);
    expect(names.length).toBe(ROWS);
    expect(new Set(names).size).toBe(ROWS);
    const wrong = rows.filter(
      (r) => r.company.Found.status !== 'completed' || r.company.Found.value !== providerValue(r.company.Key.value),
    );
    expect(wrong.slice(0, 5)).toEqual([]);

    // Credits: one charge per row, as the same run undisturbed (a job run again under its id is not charged again).
    const after = (await rest('GET', '/credits')).body.balance as number;
    expect(before - after).toBe(ROWS * PRICE);

    // The clients' rows: each answered 2xx exactly once; a 503 one at most once (its commit's fate was unknown); nothing else.
    const side = (await allRows(rest, sideId)).map((r) => r.company.Name.value as string);
    expect(new Set(side).size).toBe(side.length);
    for (const name of watch.added) expect(side).toContain(name);
    expect(side.filter((n) => n !== 'first' && !watch.added.includes(n) && !watch.unsure.includes(n))).toEqual([]);

    // No 500 anywhere; after the kill, every door answered within 2 s, and never 503 (two nodes took writes).
    expect(faultBreaches(watch.answers, ['rest-0', 'rest-1', 'mcp'], killedAt, restartedAt)).toEqual([]);

    // The node came back and caught up: the same rows on every node.
    const pk = (await s.storage.projects.get(s.workspaceId, projectId))?.pk as number;
    const sidePk = (await s.storage.projects.get(s.workspaceId, sideId))?.pk as number;
    for (const node of [0, 1, 2]) {
      expect(await s.rowsOnNode(node, pk)).toBe(ROWS);
      expect(await s.rowsOnNode(node, sidePk)).toBe(side.length);
    }
  },
  400_000,
);
