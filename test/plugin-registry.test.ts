import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../core/config.ts';
import { loadPlugins } from '../app/load-plugins.ts';
import { PluginRegistry } from '../core/plugins/registry.ts';
import { startService } from '../app/service.ts';
import formula from '../plugins/tools/formula/index.ts';
import { data, startMcpTestService } from './mcp/mcp-support.ts';

const ROOT = resolve(import.meta.dir, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A PLUGINS_DIR holding one tool whose definition file is `source`. */
function pluginsDirWith(id: string, source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'wfs-plugins-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'tools', id), { recursive: true });
  writeFileSync(join(dir, 'tools', id, 'index.ts'), source);
  return dir;
}

describe('plugin definitions are checked when they load', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['an id that is not a slug', { id: 'Bad Id' }, 'field "id"'],
    ['a missing description', { description: '' }, 'field "description"'],
    ['an input that is not a TypeBox object', { input: { type: 'object' } }, 'field "input"'],
    ['a requires entry that is not an input field', { requires: ['nope'] }, 'field "requires"'],
    ['a row expression that is not an input field', { rowExpressions: ['nope'] }, 'field "rowExpressions"'],
    ['a batch size of 0', { batchSize: 0 }, 'field "batchSize"'],
    ['a summary longer than a sentence', { summary: 'x'.repeat(201) }, 'field "summary"'],
    ['a cost without credits', { cost: { per: 'result' } }, 'field "cost.credits"'],
    ['no enrich function', { enrich: undefined }, 'field "enrich"'],
    ['a price per unit on a per-result tool', { cost: { credits: 1, per: 'result' }, costUnits: () => 3 }, 'field "costUnits"'],
  ];
  for (const [what, patch, message] of cases) {
    test(`${what} is refused, naming the plugin and the field`, () => {
      const registry = new PluginRegistry();
      expect(() => registry.addTool({ ...formula, ...patch }, 'plugins/tools/broken')).toThrow(`plugin plugins/tools/broken: ${message}`);
    });
  }

  test('every built-in builder and tool says what it does in a sentence for people; one without a summary shows its first sentence', async () => {
    const service = await startService(loadConfig({ DATABASE_URL: 'sqlite::memory:', PORT: '0', SERVE: 'rest', WORKERS: '0' }));
    const { kernel } = service;
    try {
      const plugins = [...kernel.plugins.listBuilders(), ...kernel.plugins.listTools()];
      expect(plugins.length).toBeGreaterThan(10);
      for (const p of plugins) {
        // Plain words: no route, no snake_case config or field name, one sentence.
        expect({ id: p.id, summary: p.summary }).toEqual({ id: p.id, summary: expect.stringMatching(/^[A-Z][^{}]{10,199}$/) });
        expect({ id: p.id, names: p.summary?.match(/\b[a-z]+_[a-z_]+\b|\b(GET|POST|PUT) \//g) ?? [] }).toEqual({ id: p.id, names: [] });
      }
      const registry = new PluginRegistry();
      registry.addTool({ ...formula, id: 'no_summary', summary: undefined, description: 'Adds one. Then more words for agents.' }, 'x');
      const { toolItem } = await import('../core/operations/tools.ts');
      expect(toolItem(registry.tool('no_summary') as never).summary).toBe('Adds one.');
    } finally {
      await service.stop();
    }
  });

  test('two plugins cannot claim the same id', async () => {
    const registry = await loadPlugins();
    expect(() => registry.addTool({ ...formula }, 'elsewhere/formula')).toThrow('"formula" is already registered');
  });

  test('a broken plugin in PLUGINS_DIR stops start-up with a message naming its folder and field', async () => {
    const dir = pluginsDirWith(
      'broken_tool',
      `import formula from '${join(ROOT, 'plugins/tools/formula/index.ts')}';\nexport default { ...formula, id: 'broken_tool', batchSize: -1 };\n`,
    );
    const start = startService(loadConfig({ DATABASE_URL: 'sqlite::memory:', PORT: '0', PLUGINS_DIR: dir }));
    await expect(start).rejects.toThrow(`plugin ${join(dir, 'tools', 'broken_tool')}: field "batchSize" must be an integer >= 1`);
  });
});

test('a plugin dropped into PLUGINS_DIR shows in GET /project-builders, GET /tools and MCP list_tools with no other change', async () => {
  const t = await startMcpTestService('sqlite', { PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/plugins') });
  try {
    expect((await t.api('GET', '/project-builders')).body.map((b: any) => b.builder_id)).toContain('gate_builder');
    expect((await t.api('GET', '/tools')).body.map((x: any) => x.tool_id)).toContain('paid_lookup');
    const client = await t.client();
    const tools = await data(client, 'list_tools');
    expect(tools.map((x: any) => x.tool_id)).toContain('paid_lookup');
    const listed = await client.listTools();
    const createColumn = listed.tools.find((x) => x.name === 'create_column');
    expect(JSON.stringify(createColumn?.inputSchema)).toContain('paid_lookup');
  } finally {
    await t.stop();
  }
});
