import { Type } from '@sinclair/typebox';
import jsonata from 'jsonata';
import { jsonataProblems } from '../../../core/columns/run-condition.ts';
import { defineTool } from '../../../core/plugins/plugin-types.ts';

export default defineTool({
  kind: 'tool',
  id: 'formula',
  version: '1.0.0',
  name: 'Formula',
  description:
    'Computes a value from the row with a JSONata expression; column names are fields (use backticks for names with spaces, e.g. `Full Name`). Example: $uppercase(Name) or Employees > 100 ? "large" : "small". Free, no provider.',
  category: 'transform',
  tags: ['formula', 'jsonata', 'transform', 'compute'],
  legacyIds: [],
  input: Type.Object(
    { expression: Type.String({ minLength: 1, maxLength: 4000, description: 'A JSONata expression over the row.' }) },
    { additionalProperties: false },
  ),
  requires: ['expression'],
  produces: [{ field: 'value', description: 'The expression’s result.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 500,
  checkConfig: (c) => jsonataProblems('expression', c.expression),
  async enrich(items) {
    // One compilation per distinct expression in the batch (usually one), not one per row.
    const compiled = new Map<string, ReturnType<typeof jsonata>>();
    const expression = (text: string) => {
      let c = compiled.get(text);
      if (!c) compiled.set(text, (c = jsonata(text)));
      return c;
    };
    return Promise.all(
      items.map(async (item) => {
        try {
          const value = await expression(item.config.expression).evaluate(item.row);
          return value === undefined || value === null ? { status: 'no_result' as const } : { status: 'ok' as const, value };
        } catch (e) {
          return { status: 'error' as const, error: `expression failed: ${(e as Error).message}`, retryable: false };
        }
      }),
    );
  },
});
