import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, data, type McpTestService, rpc, startMcpTestService } from './mcp/mcp-support.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';
import { createDatabase, type MariaDbServer, startMariaDb } from './support/mariadb.ts';
import { enc } from './support/test-service.ts';

/**
 * One pipeline, one error mapper (docs/architecture.md): every kind of failure, sent through the REST door
 * and through the MCP door, answers the same status — REST's HTTP status is MCP's status_code —
 * with the code the mapper gives that status.
 */
const CODES: Record<number, string> = {
  401: 'unauthorized',
  402: 'insufficient_credits',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  422: 'validation_error',
  429: 'rate_limited',
  503: 'unavailable',
};

type RestAnswer = { status: number; body: any; headers: Headers };

/** The REST answer and the MCP envelope of the same failure agree, and carry the expected status and code. */
function expectParity(status: number, rest: RestAnswer, envelope: any): void {
  expect({ rest: rest.status, mcp: envelope.status_code }).toEqual({ rest: status, mcp: status });
  expect(envelope).toMatchObject({ ok: false, error: true, code: CODES[status] });
  expect(rest.body.detail).toBeDefined();
  const restMessage = typeof rest.body.detail === 'string' ? rest.body.detail : rest.body.detail.message;
  expect(typeof restMessage).toBe('string');
  expect(envelope.detail.message).toBeString();
}

const PLANS_JSON = JSON.stringify({ trickle: { apiAccess: true, requestsPerMinute: 1 } });
const MANUAL = { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' } };

describe.each(DIALECTS)('REST and MCP answer every failure alike, on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let projectId: string;
  beforeAll(async () => {
    t = await startMcpTestService(dialect, { PLANS_JSON });
    client = await t.client();
    projectId = (await data(client, 'run_builder', { builder_id: 'manual_list_builder', form_data_json: JSON.stringify(MANUAL.form_data) }))
      .project_id;
  });
  afterAll(() => t.stop());

  /** An MCP client for another key (closed with the service). */
  const clientFor = (key: string) => t.client({ 'service-api-key': key });

  test('401: no key, and an unknown key', async () => {
    const listProjects = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } };
    for (const key of [undefined, 'wfs_00000000_unknown']) {
      const headers: Record<string, string> = key ? { 'service-api-key': key } : {};
      const rest = await t.api('GET', '/projects', { headers: { 'service-api-key': key ?? '' } });
      // MCP answers an unauthenticated request at the HTTP level, with the envelope as body.
      const res = await rpc(t.mcpUrl, listProjects, headers);
      expect(res.status).toBe(401);
      expectParity(401, rest, await res.json());
    }
  });

  test('403: a plan without API access', async () => {
    const free = await t.newWorkspace('free');
    const rest = await t.api('GET', '/credits', { headers: { 'service-api-key': free.key } });
    expectParity(403, rest, await call(await clientFor(free.key), 'get_credits'));
  });

  test('404: another workspace’s project', async () => {
    const other = await t.newWorkspace();
    const rest = await t.api('GET', `/projects/${projectId}/rows`, { headers: { 'service-api-key': other.key } });
    expectParity(404, rest, await call(await clientFor(other.key), 'get_project_rows', { project_id: projectId }));
  });

  test('422: out-of-range paging, and a filter naming no column', async () => {
    expectParity(422, await t.api('GET', '/projects?limit=0'), await call(client, 'list_projects', { limit: 0 }));
    const filter = [{ type: 'and', rules: [{ col_id: 'no-such-column', operator: 'eq', value: 1 }] }];
    const rest = await t.api('GET', `/projects/${projectId}/rows?filter_groups=${enc(filter)}`);
    const envelope = await call(client, 'get_project_rows', { project_id: projectId, filter_groups_json: JSON.stringify(filter) });
    expectParity(422, rest, envelope);
    // The same words, each door naming its own argument (MCP's is filter_groups_json).
    expect(JSON.stringify(envelope.detail).replaceAll('filter_groups_json', 'filter_groups')).toEqual(JSON.stringify(rest.body.detail));
  });

  test('402: a build the balance cannot pay for', async () => {
    const broke = await t.newWorkspace('pro', 0);
    const body = { builder_id: 'google_maps_search', form_data: { query: 'cafes', max_results: 20 } };
    const rest = await t.api('POST', '/projects', { headers: { 'service-api-key': broke.key }, body });
    const envelope = await call(await clientFor(broke.key), 'run_builder', {
      builder_id: body.builder_id,
      form_data_json: JSON.stringify(body.form_data),
    });
    expectParity(402, rest, envelope);
    expect(envelope.detail).toEqual(rest.body.detail);
  });

  test('429: over the plan’s request rate, with Retry-After on REST', async () => {
    const [forRest, forMcp] = [await t.newWorkspace('trickle'), await t.newWorkspace('trickle')];
    const mcp = await clientFor(forMcp.key);
    const headers = { 'service-api-key': forRest.key };
    expect((await t.api('GET', '/projects', { headers })).status).toBe(200);
    expect((await call(mcp, 'list_projects')).ok).toBe(true);
    const rest = await t.api('GET', '/projects', { headers });
    expectParity(429, rest, await call(mcp, 'list_projects'));
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('409: the same idempotency key while the first call still runs', async () => {
    const held = await t.newWorkspace();
    const mcp = await clientFor(held.key);
    // Hold this workspace's first calls inside the operation, after they claimed their keys.
    const projects = t.service.kernel.storage.projects;
    const create = projects.create;
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let arrived = 0;
    projects.create = async (input) => {
      if (input.workspaceId === held.workspaceId) {
        arrived++;
        await gate;
      }
      return create.call(projects, input);
    };
    try {
      const restCall = () =>
        t.api('POST', '/projects', { headers: { 'service-api-key': held.key, 'idempotency-key': 'parity-rest' }, body: MANUAL });
      const mcpCall = () =>
        call(mcp, 'run_builder', {
          builder_id: MANUAL.builder_id,
          form_data_json: JSON.stringify(MANUAL.form_data),
          idempotency_key: 'parity-mcp',
        });
      const firsts = Promise.all([restCall(), mcpCall()]);
      while (arrived < 2) await Bun.sleep(10);
      // The retries wait for the first answer, then give up (10 s) while it is still running.
      const [rest, envelope] = await Promise.all([restCall(), mcpCall()]);
      expectParity(409, rest, envelope);
      release();
      const [firstRest, firstMcp] = await firsts;
      expect(firstRest.status).toBe(201);
      expect(firstMcp.ok).toBe(true);
    } finally {
      release();
      projects.create = create;
    }
  }, 30_000);
});

describe.each(DIALECTS)('REST and MCP answer alike while the database is away, on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;
  let mariadb: MariaDbServer | undefined;
  let databaseUrl: string;
  beforeAll(async () => {
    // MariaDB: a server of its own to stop; SQLite: a file another writer will hold.
    if (dialect === 'mysql') mariadb = await startMariaDb({ bufferPoolMb: 128 });
    databaseUrl = mariadb ? await createDatabase(mariadb.url, 'parity_outage') : await freshDatabaseUrl('sqlite');
    t = await startMcpTestService(dialect, { DATABASE_URL: databaseUrl });
    client = await t.client();
  });
  afterAll(async () => {
    await t.stop();
    await mariadb?.stop();
  });

  /** Keeps the database away while `during` runs: MariaDB stopped, or the SQLite file held by another writer. */
  async function away<T>(during: () => Promise<T>): Promise<T> {
    if (mariadb) {
      const restarting = mariadb.restart(4_000);
      await Bun.sleep(500);
      try {
        return await during();
      } finally {
        await restarting;
      }
    }
    const holder = new Database(databaseUrl.slice('sqlite:'.length));
    holder.exec('BEGIN IMMEDIATE');
    try {
      return await during();
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  }

  test('503: REST with Retry-After, MCP `unavailable` with status_code 503', async () => {
    const definition = { industries: ['software'] };
    const [rest, envelope] = await away(() =>
      Promise.all([
        t.api('POST', '/icps', { body: { name: 'during the outage', definition } }),
        call(client, 'create_icp', { name: 'during the outage', definition_json: JSON.stringify(definition) }),
      ]),
    );
    expectParity(503, rest, envelope);
    expect(rest.headers.get('retry-after')).toBe('5');
    expect(rest.body.detail).toContain('database is unreachable');
    expect(envelope.detail.request_id).toBeString();
    // Back: both doors work again.
    expect((await t.api('GET', '/icps')).status).toBe(200);
    expect((await call(client, 'list_icps')).ok).toBe(true);
  }, 60_000);
});
