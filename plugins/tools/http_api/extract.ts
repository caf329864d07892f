import type { Expressions } from 'workflow-service/plugin-sdk';

/**
 * Picks the value out of a response with a JSONata expression (https://jsonata.org), e.g.
 * `data.company.name`, `items[0].id` or `$count(results)`. The expression sees the parsed body
 * (JSON, else the text) and may read `$status` and `$headers` (lower-case names). It runs in the
 * host's expression sandbox, so one that runs too long, recurses too deep or grows too big fails
 * that row instead of hanging the worker.
 */
export class ExtractError extends Error {
  override name = 'ExtractError';
}

export async function extract(
  expressions: Expressions,
  expression: string | undefined,
  body: unknown,
  status: number,
  headers: Record<string, string>,
): Promise<unknown> {
  if (!expression?.trim()) return body;
  const outcome = await expressions.evaluate(expression, body, { status, headers });
  if (!outcome.ok) throw new ExtractError(`extract failed: ${outcome.error}`);
  return outcome.value;
}
