import jsonata from 'jsonata';

/**
 * Picks the value out of a response with a JSONata expression (https://jsonata.org), e.g.
 * `data.company.name`, `items[0].id` or `$count(results)`. The expression sees the parsed body
 * (JSON, else the text) and may read `$status` and `$headers` (lower-case names). Guardrails:
 * an expression that runs past EXTRACT_TIMEOUT_MS or recurses too deep fails instead of hanging
 * the worker.
 */
export const EXTRACT_TIMEOUT_MS = 1000;

export class ExtractError extends Error {
  override name = 'ExtractError';
}

export async function extract(expression: string | undefined, body: unknown, status: number, headers: Record<string, string>): Promise<unknown> {
  if (!expression?.trim()) return body;
  let compiled: ReturnType<typeof jsonata>;
  try {
    compiled = jsonata(expression, { timeout: EXTRACT_TIMEOUT_MS, stack: 200, sequence: 100_000 });
  } catch (e) {
    throw new ExtractError(`extract is not a valid JSONata expression: ${(e as Error).message}`);
  }
  try {
    return await compiled.evaluate(body, { status, headers });
  } catch (e) {
    const err = e as { message?: string; code?: string };
    throw new ExtractError(`extract failed: ${err.message ?? err.code ?? String(e)}`);
  }
}
