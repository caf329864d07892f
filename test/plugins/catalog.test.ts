import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../support/test-service.ts';
import { csvProject, SERVICE_START_MS } from './enrich-helpers.ts';

/** The enrichment tool catalog: what GET /tools shows of each plugin, and what a bad config gets. */
const TOOLS: Record<string, { credits: number; per: string; produces: string; required: string[] }> = {
  http_api: { credits: 0, per: 'attempt', produces: 'value', required: ['url'] },
  website_info: { credits: 0, per: 'result', produces: 'socials', required: ['url'] },
  tech_stack: { credits: 0, per: 'result', produces: 'technologies', required: ['url'] },
  email_finder: { credits: 0, per: 'result', produces: 'email', required: ['first_name', 'last_name', 'domain'] },
  email_validator: { credits: 0, per: 'result', produces: 'email_verdict', required: ['email'] },
  ai_prompt: { credits: 1, per: 'attempt', produces: 'answer', required: ['prompt', 'model'] },
  person_enrich: { credits: 1, per: 'result', produces: 'email', required: [] },
  company_enrich: { credits: 1, per: 'result', produces: 'industry', required: ['domain'] },
};

describe('enrichment tool catalog', () => {
  let t: TestService;
  let pid: string;
  beforeAll(async () => {
    t = await startTestService('sqlite');
    pid = await csvProject(t, 'Name,Domain\nAcme,acme.example.com\n');
  }, SERVICE_START_MS);
  afterAll(() => t.stop());

  test('GET /tools lists each tool with its config schema, what it produces and its cost', async () => {
    const r = await t.api('GET', '/tools');
    expect(r.status).toBe(200);
    for (const [id, want] of Object.entries(TOOLS)) {
      const item = r.body.find((x: any) => x.tool_id === id);
      expect(item).toBeDefined();
      expect(item.cost).toEqual({ credits: want.credits, per: want.per });
      expect(item.description.length).toBeGreaterThan(80);
      expect(item.config_schema.type).toBe('object');
      expect(item.config_schema.additionalProperties).toBe(false);
      expect(item.config_schema.required ?? []).toEqual(want.required);
      expect(item.produces.map((p: any) => p.field)).toContain(want.produces);
    }
  });

  test('GET /tools/search finds them by what they do', async () => {
    const ids = async (q: string) => (await t.api('GET', `/tools/search?q=${encodeURIComponent(q)}`)).body.map((x: any) => x.tool_id);
    expect(await ids('email')).toEqual(expect.arrayContaining(['email_finder', 'email_validator', 'person_enrich']));
    expect((await ids('tech stack'))[0]).toBe('tech_stack');
    expect(await ids('wappalyzer')).toEqual(['tech_stack']);
    expect(await ids('openai')).toEqual(['ai_prompt', 'research_agent']);
    expect((await ids('research the web with sources'))[0]).toBe('research_agent');
    expect(await ids('jsonata')).toContain('http_api');
    // Both company enrichers (Apollo's and People Data Labs') give firmographics.
    expect((await ids('firmographics')).sort()).toEqual(['company_enrich', 'pdl_company_enrich']);
  });

  test('a bad config is 422 naming the field, and adds no column', async () => {
    const cases: [string, unknown, string][] = [
      ['http_api', { url: 'ftp://files.example.com/x' }, 'config.url'],
      ['http_api', { url: 'https://api.example.com', method: 'FETCH' }, 'config.method'],
      ['http_api', { url: 'https://api.example.com', timeout_ms: 600_000 }, 'config.timeout_ms'],
      ['http_api', { url: 'https://api.example.com', headers: { 'Bad Header': 'x' } }, 'config.headers.Bad Header'],
      ['website_info', {}, 'config.url'],
      ['website_info', { url: 42 }, 'config.url'],
      ['tech_stack', { url: '{{Domain}}', website: 'x' }, 'config.website'],
      ['email_finder', { first_name: 'Ada', last_name: 'Lovelace' }, 'config.domain'],
      ['email_finder', { first_name: 'Ada', last_name: 'Lovelace', domain: '{{Domain}}', pattern: '{nick}' }, 'config.pattern'],
      ['email_validator', { address: 'a@b.c' }, 'config.email'],
      ['ai_prompt', { prompt: 'Hi {{Name}}' }, 'config.model'],
      ['ai_prompt', { prompt: 'Hi', model: 'gpt-4o-mini', temperature: 3 }, 'config.temperature'],
      ['ai_prompt', { prompt: 'Hi', model: 'gpt-4o-mini', json_schema: { type: 'string' } }, 'config.json_schema.type'],
      ['person_enrich', {}, 'config'],
      ['person_enrich', { email: 'a@example.com', phone: '1' }, 'config.phone'],
      ['company_enrich', { domain: '{{Nope}}' }, 'config'],
      ['company_enrich', {}, 'config.domain'],
    ];
    const before = (await t.api('GET', `/projects/${pid}/columns`)).body.length;
    for (const [tool_id, config, path] of cases) {
      const r = await t.api('POST', `/projects/${pid}/columns`, { body: { name: 'X', tool_id, config } });
      expect([tool_id, r.status]).toEqual([tool_id, 422]);
      expect([tool_id, r.body.detail.errors.map((e: any) => e.path)]).toEqual([tool_id, expect.arrayContaining([path])]);
    }
    expect((await t.api('GET', `/projects/${pid}/columns`)).body.length).toBe(before);
  });
});
