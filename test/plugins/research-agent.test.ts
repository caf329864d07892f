import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { call, connect } from '../mcp/mcp-support.ts';
import { DIALECTS } from '../support/databases.ts';
import { startTestService, type TestService } from '../support/test-service.ts';
import { SERVICE_START_MS } from './enrich-helpers.ts';

/**
 * research_agent through the real service (sandbox): in the catalogs with its output schema, an
 * estimate that knows its step budget, and a run charged per step used — a tool priced per unit
 * (SDK 1.3) as the kernel charges and refunds it. Its own behaviour is tested in its folder.
 */

const SCHEMA = {
  type: 'object',
  properties: { sells_to_healthcare: { type: 'boolean' }, evidence: { type: 'string' } },
  required: ['sells_to_healthcare', 'evidence'],
  additionalProperties: false,
};

describe.each(DIALECTS)('research_agent on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { MCP_PORT: '0' });
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('GET /tools and MCP list_tools show it, its output_schema described with an example, and its price per unit', async () => {
    const rest = (await t.api('GET', '/tools')).body.find((x: any) => x.tool_id === 'research_agent');
    expect(rest).toMatchObject({
      category: 'ai',
      cost: { credits: 1, per: 'attempt' },
      summary: expect.stringContaining('with the pages it used'),
    });
    const schema = rest.config_schema;
    expect(schema.required).toEqual(['question', 'output_schema', 'model']);
    expect(schema.properties.output_schema.examples[0].properties.sells_to_healthcare.type).toBe('boolean');
    expect(schema.properties.max_steps).toMatchObject({ minimum: 1, maximum: 20, default: 6 });
    expect(rest.description).toContain('max_steps + 1 is reserved per row');
    const ws = await t.newWorkspace('pro', 100);
    const client = await connect(t.service.mcpUrl as string, { 'service-api-key': ws.key });
    try {
      const listed = await call(client, 'list_tools', {});
      expect(listed.data.find((x: any) => x.tool_id === 'research_agent')).toEqual(rest);
    } finally {
      await client.close();
    }
  });

  test('the estimate reserves every step of the budget; the run charges the steps used and gives back the rest', async () => {
    const ws = await t.newWorkspace('pro', 1000);
    const as = { headers: { 'service-api-key': ws.key } };
    const made = await t.api('POST', '/projects', {
      ...as,
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme Health\nGlobex\nInitech' } },
    });
    const pid = made.body.project_id as string;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=20`, as);
    const col = await t.api('POST', `/projects/${pid}/columns`, {
      ...as,
      body: {
        name: 'Healthcare',
        tool_id: 'research_agent',
        config: { question: 'Does {{Name}} sell to healthcare?', output_schema: SCHEMA, model: 'gpt-test', max_steps: 4 },
      },
    });
    expect(col.status).toBe(201);
    const balance = await t.service.kernel.storage.credits.balance(ws.workspaceId);
    const est = await t.api('POST', `/projects/${pid}/columns/estimate`, { ...as, body: { col_ids: [col.body.col_id] } });
    // 3 rows × (4 steps + the answer).
    expect(est.body).toMatchObject({ cells: 3, credits_max: 15 });
    await t.api('POST', `/projects/${pid}/columns/run`, { ...as, body: { col_ids: [col.body.col_id] } });
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=30`, as);
    // The sandbox researches with one search and one read: 3 credits a row.
    expect(balance - (await t.service.kernel.storage.credits.balance(ws.workspaceId))).toBe(9);
    const rows = (await t.api('GET', `/projects/${pid}/rows?page_size=10`, as)).body.rows;
    for (const r of rows) {
      expect(r.company.Healthcare.status).toBe('completed');
      expect(r.company.Healthcare.value.sources[0].url).toEndWith('.example.com/about');
    }
  });

  test('a column whose output_schema is not JSON Schema is refused with a 422 naming the field', async () => {
    const ws = await t.newWorkspace('pro', 10);
    const as = { headers: { 'service-api-key': ws.key } };
    const made = await t.api('POST', '/projects', { ...as, body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' } } });
    const r = await t.api('POST', `/projects/${made.body.project_id}/columns`, {
      ...as,
      body: {
        name: 'Bad',
        tool_id: 'research_agent',
        config: { question: 'Q {{Name}}', model: 'm', output_schema: { type: 'object', properties: { n: { type: 'integr' } } } },
      },
    });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('config.output_schema');
  });
});
