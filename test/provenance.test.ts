import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

/**
 * Provenance (docs/enrichment.md): each tool cell keeps {tool_id, provider, fetched_at, credits, cached},
 * shown with include=meta (REST) / include_meta (MCP); a result found by one project is reused,
 * free and marked cached, by the workspace's other projects within ENRICHMENT_CACHE_TTL_S.
 */
describe.each(DIALECTS)('provenance and the workspace cache on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, MCP_PORT: '0' });
  });
  afterAll(() => t.stop());

  /** A project of these names with a `Lookup` column (paid_lookup: 2 credits per result, cached by key), run to the end. */
  async function enrich(svc: TestService, key: string, names: string[], answer = 'mail-{{Name}}') {
    const as = { headers: { 'service-api-key': key } };
    const made = await svc.api('POST', '/projects', {
      ...as,
      body: { builder_id: 'manual_list_builder', form_data: { companies: names.join('\n') } },
    });
    const projectId = made.body.project_id as string;
    await svc.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as);
    await svc.api('POST', `/projects/${projectId}/columns`, {
      ...as,
      body: { name: 'Lookup', tool_id: 'paid_lookup', config: { key: '{{Name}}', answer }, auto_run: false },
    });
    await svc.api('POST', `/projects/${projectId}/columns/run`, { ...as, body: {} });
    await svc.api('GET', `/projects/${projectId}/wait?wait_seconds=20`, as);
    const rows = await svc.api('GET', `/projects/${projectId}/rows?include=meta`, as);
    expect(rows.status).toBe(200);
    const cells = Object.fromEntries(rows.body.rows.map((r: any) => [r.company.Name.value, r.company.Lookup]));
    return { projectId, cells, as };
  }

  test('every tool cell says which tool found it, when, for how many credits; include=meta only when asked', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const before = Date.now();
    const { projectId, cells, as } = await enrich(t, ws.key, ['Acme', 'Globex']);
    for (const name of ['Acme', 'Globex']) {
      expect(cells[name]).toMatchObject({
        status: 'completed',
        value: `mail-${name}`,
        meta: { tool_id: 'paid_lookup', provider: 'paid_lookup', credits: 2, cached: false },
      });
      const at = Date.parse(cells[name].meta.fetched_at);
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(Date.now());
    }
    // Input cells carry none; without include, no cell carries meta.
    const plain = await t.api('GET', `/projects/${projectId}/rows`, as);
    expect(plain.body.rows.every((r: any) => Object.values(r.company).every((c: any) => !('meta' in c)))).toBe(true);
    const one = await t.api('GET', `/projects/${projectId}/rows/${plain.body.rows[0].id}?include=meta`, as);
    expect(one.body.company.Lookup.meta.tool_id).toBe('paid_lookup');
    expect('meta' in one.body.company.Name).toBe(false);
    // A tool cell never run says so (null); an unknown include is a 422.
    await t.api('POST', `/projects/${projectId}/columns`, {
      ...as,
      body: { name: 'Later', tool_id: 'paid_lookup', config: { key: '{{Name}}' } },
    });
    const later = await t.api('GET', `/projects/${projectId}/rows?include=meta`, as);
    expect(later.body.rows[0].company.Later).toMatchObject({ status: 'pending', meta: null });
    expect((await t.api('GET', `/projects/${projectId}/rows?include=everything`, as)).status).toBe(422);

    // MCP: include_meta, in both formats.
    const client = await connect(t.service.mcpUrl as string, as.headers);
    try {
      const cellsFormat = await call(client, 'get_project_rows', { project_id: projectId, include_meta: true });
      expect(cellsFormat.data.rows[0].company.Lookup.meta).toMatchObject({ tool_id: 'paid_lookup', cached: false });
      const values = await call(client, 'get_project_rows', { project_id: projectId, include_meta: true, format: 'values' });
      expect(values.data.rows[0].meta.Lookup).toMatchObject({ tool_id: 'paid_lookup', credits: 2 });
      const tools = await client.listTools();
      const rowsTool = tools.tools.find((x) => x.name === 'get_project_rows');
      expect(Object.keys(rowsTool?.inputSchema.properties ?? {})).toContain('include_meta');
      expect(Object.keys(rowsTool?.inputSchema.properties ?? {})).not.toContain('include');
    } finally {
      await client.close();
    }
  });

  test('another project of the workspace reuses a result, free and marked cached; another workspace pays', async () => {
    const ws = await t.newWorkspace('pro', 100);
    const first = await enrich(t, ws.key, ['Initech', 'Umbrella']);
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(96);
    const second = await enrich(t, ws.key, ['Initech', 'Umbrella', 'Hooli']);
    // Two reused (free), one new lookup (2 credits).
    expect(await t.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(94);
    for (const name of ['Initech', 'Umbrella']) {
      expect(second.cells[name]).toMatchObject({ status: 'completed', value: `mail-${name}`, meta: { cached: true, credits: 0 } });
      // When the value was found: the first project's lookup.
      expect(second.cells[name].meta.fetched_at).toBe(first.cells[name].meta.fetched_at);
    }
    expect(second.cells.Hooli.meta).toMatchObject({ cached: false, credits: 2 });

    const other = await t.newWorkspace('pro', 100);
    const theirs = await enrich(t, other.key, ['Initech']);
    expect(theirs.cells.Initech.meta).toMatchObject({ cached: false, credits: 2 });
    expect(await t.service.kernel.storage.credits.balance(other.workspaceId)).toBe(98);
  });

  test('past ENRICHMENT_CACHE_TTL_S a result is looked up (and paid) again; 0 turns reuse off', async () => {
    const short = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, ENRICHMENT_CACHE_TTL_S: '1' });
    const off = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, ENRICHMENT_CACHE_TTL_S: '0' });
    try {
      const ws = await short.newWorkspace('pro', 100);
      await enrich(short, ws.key, ['Vandelay']);
      await Bun.sleep(1100);
      const again = await enrich(short, ws.key, ['Vandelay']);
      expect(again.cells.Vandelay.meta).toMatchObject({ cached: false, credits: 2 });
      expect(await short.service.kernel.storage.credits.balance(ws.workspaceId)).toBe(96);

      const w = await off.newWorkspace('pro', 100);
      await enrich(off, w.key, ['Pied Piper']);
      const twice = await enrich(off, w.key, ['Pied Piper']);
      expect(twice.cells['Pied Piper'].meta).toMatchObject({ cached: false, credits: 2 });
    } finally {
      await short.stop();
      await off.stop();
    }
  });
});
