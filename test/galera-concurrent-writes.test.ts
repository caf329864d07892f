import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createConnection } from 'mysql2/promise';
import { openStorage } from '../adapters/storage/sql-storage.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { type FakeServer, startFakeServer } from './support/fake-providers.ts';
import { type GaleraService, startGaleraService } from './support/galera-service.ts';
import { allRows, csvProject, progress, type Rest, restClient, until } from './support/rest-steps.ts';

/**
 * Writes to one project from every node at once (docs/operations.md, "MariaDB Galera Cluster"):
 * for each unique key, add_row through the API process on node 1, the one on node 2 and MCP on
 * node 3 at the same moment. Galera certifies each commit against the others' and fails the
 * losers at commit (a deadlock error); the storage runs them again, where they find the key taken.
 * Every new row is enriched by a paid tool on the workers of nodes 2 and 3, whose debits of the
 * one balance conflict the same way.
 */

const KEYS = 300;
/** Keys sent at once (each by three doors). */
const WAVE = 8;
const PRICE = 1; // http_lookup: 1 credit per attempt
const CREDITS = 100_000;

let s: GaleraService;
let provider: FakeServer;
let mcp: Client;
let rests: Rest[];

// Out of the default run until a cluster's start holds on a busy 2-core machine: in one run on the
// final head a node stayed Donor/Desynced after the joiners' state transfers, for 300 s.
// GALERA_TESTS=1 runs them (docs/operations.md, README "Tests").
const RUN = Boolean(process.env.GALERA_TESTS);

beforeAll(async () => {
  if (!RUN) return;
  provider = startFakeServer({ 'POST /lookup': (r) => Response.json({ values: (r.body.keys as string[]).map((k) => `v:${k}`) }) });
  s = await startGaleraService({ credits: CREDITS });
  rests = s.rest.map((base) => restClient(base, s.key));
  mcp = await connect(s.mcpUrl, { 'service-api-key': s.key });
}, 400_000);

afterAll(async () => {
  await mcp?.close();
  await s?.stop();
  provider?.stop();
});

interface Added {
  door: string;
  status: number;
  rowId?: string;
  created?: boolean;
  detail?: string;
}

/** add_row of one key through one door: REST (201 created, 200 the existing row) or MCP. */
async function addRow(door: number | 'mcp', projectId: string, key: string): Promise<Added> {
  const company = { Name: `${door}:${key}`, Key: key };
  if (door === 'mcp') {
    const e = await call(mcp, 'add_row', { project_id: projectId, company_json: JSON.stringify(company) });
    if (!e.ok) return { door: 'mcp', status: Number(e.status_code), detail: JSON.stringify(e) };
    return { door: 'mcp', status: 200, rowId: e.data.row_id, created: e.data.message === 'Row created' };
  }
  const r = await (rests[door] as Rest)('POST', `/projects/${projectId}/rows`, { company });
  const rowId = r.body?.row_id as string | undefined;
  return {
    door: `rest-${door}`,
    status: r.status,
    rowId,
    created: r.status === 201,
    detail: r.status >= 300 ? JSON.stringify(r.body) : undefined,
  };
}

test.skipIf(!RUN)(
  'one unique key added from three nodes at once makes one row; debits of one balance from two nodes all count; no 500',
  async () => {
    const rest = rests[0] as Rest;
    const projectId = await csvProject(rest, 'keyed', 'Name,Key\nseed,seed');
    expect((await rest('PUT', `/projects/${projectId}/settings`, { unique_columns: ['Key'] })).status).toBe(200);
    const column = await rest('POST', `/projects/${projectId}/columns`, {
      name: 'Found',
      tool_id: 'http_lookup',
      config: { url: `${provider.url}/lookup`, key: '{{Key}}' },
      auto_run: true,
    });
    expect(column.status).toBe(201);
    const before = (await rest('GET', '/credits')).body.balance as number;

    const answers = new Map<string, Added[]>();
    for (let k = 0; k < KEYS; k += WAVE) {
      const keys = Array.from({ length: Math.min(WAVE, KEYS - k) }, (_, i) => `key-${k + i}`);
      await Promise.all(
        keys.map(async (key) =>
          answers.set(key, await Promise.all([addRow(0, projectId, key), addRow(1, projectId, key), addRow('mcp', projectId, key)])),
        ),
      );
    }

    // Every answer a success: the certification conflicts were run again, never shown.
    const all = [...answers.values()].flat();
    expect(all.filter((a) => a.status >= 300)).toEqual([]);
    // Per key, one door created the row and the others were answered that same row.
    for (const [key, three] of answers) {
      expect({ key, created: three.filter((a) => a.created).length }).toEqual({ key, created: 1 });
      expect(new Set(three.map((a) => a.rowId)).size).toBe(1);
    }

    // One row per key in the project, each enriched once.
    let last: Record<string, number> = {};
    await until('every cell settled', async () => {
      last = await progress(rest, projectId);
      return last.completed === KEYS ? true : undefined;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; the cells now: ${JSON.stringify(last)}`);
    });
    const rows = await allRows(rest, projectId);
    const keys = rows.map((r) => r.company.Key.value as string);
    expect(keys.length).toBe(KEYS + 1);
    expect(new Set(keys).size).toBe(KEYS + 1);
    for (const r of rows.filter((x) => x.company.Key.value !== 'seed')) expect(r.company.Found.value).toBe(`v:${r.company.Key.value}`);

    // No lost debit: the workers of two nodes charged the one balance, each new row once.
    const after = (await rest('GET', '/credits')).body.balance as number;
    expect(before - after).toBe(KEYS * PRICE);
  },
  400_000,
);

test.skipIf(!RUN)(
  'every table the migrations make is InnoDB with a primary key (Galera replicates only InnoDB, and needs the key to certify and apply a row)',
  async () => {
    const node = s.galera.nodes[0];
    const c = await createConnection({ host: '127.0.0.1', port: node?.ports.client, user: 'root', database: 'wfs' });
    try {
      const [tables] = await c.query(
        "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'wfs' AND TABLE_TYPE = 'BASE TABLE'",
      );
      expect(Number((tables as { n: number }[])[0]?.n)).toBeGreaterThan(30);
      const [unfit] = await c.query(`
      SELECT t.TABLE_NAME AS name, t.ENGINE AS engine FROM information_schema.TABLES t
      WHERE t.TABLE_SCHEMA = 'wfs' AND t.TABLE_TYPE = 'BASE TABLE'
        AND (t.ENGINE <> 'InnoDB' OR NOT EXISTS (
          SELECT 1 FROM information_schema.TABLE_CONSTRAINTS k
          WHERE k.TABLE_SCHEMA = t.TABLE_SCHEMA AND k.TABLE_NAME = t.TABLE_NAME AND k.CONSTRAINT_TYPE = 'PRIMARY KEY'))`);
      expect(unfit).toEqual([]);
    } finally {
      await c.end();
    }
  },
);

test.skipIf(!RUN)(
  'two processes starting at once on two nodes migrate a new database once (the migration lock is a replicated row, not GET_LOCK)',
  async () => {
    await s.galera.createDatabase('wfs_fresh');
    const [a, b] = await Promise.all([
      openStorage(s.galera.databaseUrl('wfs_fresh', [0, 1, 2]), { poolSize: 2 }),
      openStorage(s.galera.databaseUrl('wfs_fresh', [1, 2, 0]), { poolSize: 2 }),
    ]);
    try {
      expect(await a.pendingMigrations()).toEqual([]);
      expect(await b.pendingMigrations()).toEqual([]);
      const applied = await a.database.db
        .selectFrom('schema_migrations' as never)
        .select('name' as never)
        .execute();
      const names = applied.map((r) => (r as { name: string }).name);
      expect(names.length).toBeGreaterThan(20);
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await a.close();
      await b.close();
    }
  },
  400_000,
);
