import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type FakeHubSpot, startFakeHubSpot } from '../../plugins/tools/hubspot_sync/fake-hubspot.ts';
import { DIALECTS } from '../support/databases.ts';
import { data, type McpTestService, startMcpTestService } from '../mcp/mcp-support.ts';
import { addColumn, cellOf, csvProject, runColumns, SERVICE_START_MS, setEnv, settledRows } from './enrich-helpers.ts';

/**
 * The CRM sync tools in the running service, with no kernel change: in the catalog (REST and MCP),
 * validated on column creation, and a HubSpot sync run end to end through the column run, the
 * rename of a column its mapping reads, and a re-run that updates the same records.
 */

const TOKEN = 'pat-eu1-crm-sync-e2e-token';

describe.each(DIALECTS)('CRM sync tools in the service on %s', (dialect) => {
  let t: McpTestService;
  let hubspot: FakeHubSpot;
  let restoreEnv: () => void;
  beforeAll(async () => {
    hubspot = startFakeHubSpot({ token: TOKEN });
    restoreEnv = setEnv({ HUBSPOT_ACCESS_TOKEN: TOKEN, HUBSPOT_BASE_URL: hubspot.url, ALLOW_PRIVATE_NETWORK: '1' });
    t = await startMcpTestService(dialect, { PROVIDER_MODE: 'live', JOB_MAX_ATTEMPTS: '2' });
  }, SERVICE_START_MS);
  afterAll(async () => {
    await t.stop();
    restoreEnv();
    hubspot.stop();
  });

  test('GET /tools, GET /tools/search and MCP list_tools show both, with their config schema and url as the main field', async () => {
    const r = await t.api('GET', '/tools');
    expect(r.status).toBe(200);
    for (const id of ['hubspot_sync', 'salesforce_sync']) {
      const item = r.body.find((x: any) => x.tool_id === id);
      expect(item).toMatchObject({ category: 'integration', cost: { credits: 0, per: 'attempt' } });
      expect(item.config_schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['object', 'key'] });
      expect(Object.keys(item.config_schema.properties)).toEqual(expect.arrayContaining(['object', 'key', 'fields', 'clear_empty']));
      expect(item.produces.map((p: any) => p.field)).toEqual(['url', 'id', 'action']);
    }
    const found = (await t.api('GET', '/tools/search?q=crm%20sync')).body.map((x: any) => x.tool_id);
    expect(found.slice(0, 2).sort()).toEqual(['hubspot_sync', 'salesforce_sync']);
    const client = await t.client();
    const listed = (await data(client, 'list_tools')) as { tool_id: string }[];
    expect(listed.map((x) => x.tool_id)).toEqual(expect.arrayContaining(['hubspot_sync', 'salesforce_sync']));
  });

  test('a mapping that writes the key’s field, or names a column the project lacks, is a 422 naming the field', async () => {
    const pid = await csvProject(t, 'Name,Domain\nAcme,acme.test\n');
    const cases: [string, unknown, string][] = [
      ['hubspot_sync', { object: 'companies', key: '{{Domain}}', fields: { domain: '{{Domain}}' } }, 'config.fields.domain'],
      ['hubspot_sync', { object: 'companies', key: '{{Domain}}', fields: { 'bad name': 'x' } }, 'config.fields.bad name'],
      ['hubspot_sync', { object: 'companies', key: '{{Nope}}' }, 'config'],
      ['salesforce_sync', { object: 'Account', key: '{{Domain}}', fields: { Website: '{{Domain}}' } }, 'config.fields.Website'],
      ['salesforce_sync', { object: 'Opportunity', key: '{{Domain}}' }, 'config.object'],
    ];
    for (const [tool_id, config, path] of cases) {
      const r = await t.api('POST', `/projects/${pid}/columns`, { body: { name: 'CRM', tool_id, config } });
      expect([tool_id, r.status]).toEqual([tool_id, 422]);
      expect(r.body.detail.errors.map((e: any) => e.path)).toEqual(expect.arrayContaining([path]));
    }
  });

  test('a HubSpot column syncs each row, follows a column rename, and a re-run updates the same companies', async () => {
    const pid = await csvProject(t, 'Name,Domain\nAcme,acme.test\nAcme EU,https://www.acme.test/eu\nGlobex,globex.test\n');
    const col = await addColumn(t, pid, 'HubSpot', 'hubspot_sync', {
      object: 'companies',
      key: '{{Domain}}',
      fields: { name: '{{Name}}' },
    });
    const rows = await runColumns(t, pid, [col]);
    const acme = cellOf(rows, 'Name', 'Acme', 'HubSpot');
    expect(acme).toMatchObject({
      status: 'completed',
      value: { url: expect.stringContaining('/contacts/4242/record/0-2/'), action: 'created' },
    });
    expect(cellOf(rows, 'Name', 'Acme EU', 'HubSpot')).toMatchObject({
      status: 'completed',
      value: { id: acme.value.id, action: 'updated' },
    });
    expect(cellOf(rows, 'Name', 'Globex', 'HubSpot').value.id).not.toBe(acme.value.id);
    expect(hubspot.records.companies?.size).toBe(2);

    const columns = (await t.api('GET', `/projects/${pid}/columns`)).body;
    const nameCol = columns.find((c: any) => c.name === 'Name');
    expect((await t.api('PATCH', `/projects/${pid}/columns/${nameCol.col_id}`, { body: { name: 'Company' } })).status).toBe(200);
    const renamed = (await t.api('GET', `/projects/${pid}/columns`)).body.find((c: any) => c.col_id === col);
    expect(renamed.config.fields).toEqual({ name: '{{Company}}' });
    expect(renamed.primary_field).toBe('url');

    const r = await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [col], mode: 'all' } });
    expect(r.status).toBe(200);
    const again = await settledRows(t, pid);
    expect(cellOf(again, 'Company', 'Globex', 'HubSpot')).toMatchObject({ status: 'completed', value: { action: 'updated' } });
    expect(hubspot.records.companies?.size).toBe(2);
  });
});
