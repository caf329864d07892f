import { defineTool, type EnrichResult, jsonataProblems, Type } from 'workflow-service/plugin-sdk';

export default defineTool({
  kind: 'tool',
  id: 'formula',
  version: '1.0.0',
  name: 'Formula',
  summary: "Computes a value from the row's other columns, like a spreadsheet formula.",
  description:
    'Computes a value from the row with a JSONata expression; column names are fields (use backticks for names with spaces, e.g. `Full Name`). Example: $uppercase(Name) or Employees > 100 ? "large" : "small". Each row is evaluated in a sandbox with bounds (FORMULA_TIMEOUT_MS, 1 s by default; 500 levels of nesting; 100,000 items per sequence; memory): a row that passes one ends as error. Free, no provider.',
  category: 'transform',
  tags: ['formula', 'jsonata', 'transform', 'compute'],
  legacyIds: [],
  input: Type.Object(
    { expression: Type.String({ minLength: 1, maxLength: 4000, description: 'A JSONata expression over the row.' }) },
    { additionalProperties: false },
  ),
  requires: ['expression'],
  rowExpressions: ['expression'],
  produces: [{ field: 'value', description: 'The expression’s result.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 500,
  checkConfig: (c) => jsonataProblems('expression', c.expression),
  async enrich(items, ctx) {
    // One sandbox call per distinct expression in the batch (usually one: the column's).
    const byExpression = new Map<string, number[]>();
    items.forEach((item, i) => {
      const list = byExpression.get(item.config.expression);
      if (list) list.push(i);
      else byExpression.set(item.config.expression, [i]);
    });
    const results: EnrichResult[] = new Array(items.length);
    for (const [expression, indexes] of byExpression) {
      const outcomes = await ctx.expressions.evaluateMany(
        expression,
        indexes.map((i) => (items[i] as (typeof items)[number]).row),
      );
      outcomes.forEach((outcome, j) => {
        results[indexes[j] as number] = !outcome.ok
          ? { status: 'error', error: outcome.error, retryable: false }
          : outcome.value === undefined || outcome.value === null
            ? { status: 'no_result' }
            : { status: 'ok', value: outcome.value };
      });
    }
    return results;
  },
});
