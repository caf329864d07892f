import { describe, expect, test } from 'bun:test';
import { defineBuilder, defineTool, ProviderError, Type } from 'workflow-service/plugin-sdk';
import { runBuilder, runTool, testToolContext } from 'workflow-service/plugin-testing';
import csvImport from '../plugins/builders/csv_import_builder/index.ts';
import formula from '../plugins/tools/formula/index.ts';

/** A tool that reports what it was given, and fails a batch when a row asks it to. */
const probe = defineTool({
  kind: 'tool',
  id: 'probe',
  version: '1.0.0',
  name: 'Probe',
  description: 'Test tool.',
  category: 'test',
  tags: [],
  legacyIds: [],
  input: Type.Object({ text: Type.String({ maxLength: 20 }), mode: Type.Optional(Type.String()) }, { additionalProperties: false }),
  requires: ['text'],
  produces: [{ field: 'text', description: 'What it saw.' }],
  provider: { requiredEnv: ['PROBE_KEY'], optionalEnv: ['PROBE_URL'] },
  cost: { credits: 0, per: 'result' },
  batchSize: 2,
  isValid: (value) => value !== 'invalid',
  async enrich(items, ctx) {
    if (items.some((i) => i.config.mode === 'throw')) throw new ProviderError('provider busy', 503, true);
    return items.map((i) => ({
      status: 'ok' as const,
      value: i.config.mode === 'env' ? `${ctx.env('PROBE_KEY')}/${ctx.env('PATH')}` : i.config.text,
    }));
  },
});

describe('runTool runs a tool over rows as a column would', () => {
  test('renders templates per row, skips rows missing a required input, answers in row order', async () => {
    const rows = [{ Name: 'Acme' }, { Name: '' }, { Name: 'Globex' }];
    expect(await runTool(probe, rows, { text: '{{Name}}' })).toEqual([
      { status: 'ok', value: 'Acme' },
      { status: 'skipped', reason: 'missing input: text' },
      { status: 'ok', value: 'Globex' },
    ]);
  });

  test('a batch that throws gives each of its rows the error, retryable as it says; other batches keep their results', async () => {
    const rows = [{ M: 'throw' }, { M: '' }, { M: '' }];
    expect(await runTool(probe, rows, { text: 'x', mode: '{{M}}' })).toEqual([
      { status: 'error', error: 'provider busy', retryable: true },
      { status: 'error', error: 'provider busy', retryable: true },
      { status: 'ok', value: 'x' },
    ]);
  });

  test('a value the tool says is not valid is no_result', async () => {
    expect(await runTool(probe, [{}], { text: 'invalid' })).toEqual([{ status: 'no_result' }]);
  });

  test('ctx.env answers only the declared variables, from options.env when given', async () => {
    const env = { PROBE_KEY: 'k1', PATH: '/usr/bin' };
    expect(await runTool(probe, [{}], { text: 'x', mode: 'env' }, { env })).toEqual([{ status: 'ok', value: 'k1/undefined' }]);
    const ctx = testToolContext(probe, { env, providerMode: 'live' });
    expect([ctx.providerMode, ctx.env('PROBE_KEY'), ctx.env('PATH'), ctx.env('PROBE_URL')]).toEqual(['live', 'k1', undefined, undefined]);
  });

  test('a config the host would refuse with 422 is refused, naming the fields', async () => {
    await expect(runTool(probe, [{}], { text: 'x'.repeat(30) })).rejects.toThrow('probe config refused: config.text');
    await expect(runTool(formula, [{}], { expression: '$sum(' })).rejects.toThrow('config.expression is not a valid JSONata expression');
  });

  test('tools get the real expression sandbox', async () => {
    const rows = [
      { Name: 'acme', Employees: 500 },
      { Name: 'globex', Employees: 5 },
    ];
    expect(await runTool(formula, rows, { expression: 'Employees > 100 ? $uppercase(Name) : "small"' })).toEqual([
      { status: 'ok', value: 'ACME' },
      { status: 'ok', value: 'small' },
    ]);
  });
});

describe('runBuilder runs a builder over a form as a project creation would', () => {
  const pages = defineBuilder({
    kind: 'builder',
    id: 'pages',
    version: '1.0.0',
    name: 'Pages',
    description: 'Test builder.',
    category: 'test',
    tags: [],
    legacyIds: [],
    input: Type.Object({ pages: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    cost: { credits: 0, per: 'row' },
    maxRows: 25,
    columns: () => ['N'],
    projectName: () => 'Pages',
    target: (form) => form.pages * 10,
    async *run(form, ctx) {
      const start = ctx.resume ? (ctx.resume.cursor as number) + 1 : 0;
      for (let p = start; p < form.pages; p++) yield { rows: Array.from({ length: 10 }, (_, i) => ({ N: p * 10 + i })), cursor: p };
    },
  });

  test('collects the rows of every page, up to maxRows like the host', async () => {
    expect((await runBuilder(pages, { pages: 2 })).length).toBe(20);
    expect((await runBuilder(pages, { pages: 5 })).map((r) => r.N)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect((await runBuilder(pages, { pages: 3 }, { resume: { cursor: 1 } })).map((r) => r.N)[0]).toBe(20);
  });

  test('refuses a form outside the schema, and one the builder refuses in columns()', async () => {
    await expect(runBuilder(pages, { pages: 0 })).rejects.toThrow('pages form refused: form_data.pages');
    await expect(runBuilder(csvImport, { csv_text: ',b\n1,2' } as never)).rejects.toThrow('csv_text header 1 is empty');
  });
});
