import jsonata from 'jsonata';
import { validationError } from '../errors.ts';

type Compiled = ReturnType<typeof jsonata>;
const cache = new Map<string, Compiled>();

/** Compiles a JSONata run condition once; a syntax error is a 422 that points at the position. */
export function compileCondition(expression: string, path = 'run_condition'): Compiled {
  let compiled = cache.get(expression);
  if (compiled) return compiled;
  try {
    compiled = jsonata(expression);
  } catch (e) {
    const err = e as { message?: string; position?: number };
    throw validationError(`${path} is not a valid JSONata expression: ${err.message}${err.position !== undefined ? ` (at ${err.position})` : ''}`, [
      { path, message: 'is not valid JSONata' },
    ]);
  }
  if (cache.size > 1000) cache.clear();
  cache.set(expression, compiled);
  return compiled;
}

/**
 * Evaluates a run condition over a row (column name → value). Truthy runs the cell; false, null,
 * empty results or an evaluation error skip it. Example: `Website != null and $contains(Country, "FR")`.
 */
export async function conditionHolds(expression: string, row: Record<string, unknown>): Promise<{ holds: boolean; reason?: string }> {
  try {
    const result = await compileCondition(expression).evaluate(row);
    const holds = Array.isArray(result) ? result.length > 0 : Boolean(result);
    return holds ? { holds } : { holds, reason: `run condition is false: ${expression}` };
  } catch (e) {
    return { holds: false, reason: `run condition failed: ${(e as Error).message}` };
  }
}

/**
 * For a tool's `checkConfig`: a JSONata field that does not compile, as a field problem. Fields
 * holding `{{Column}}` templates are checked once rendered, at run time.
 */
export function jsonataProblems(field: string, expression: string | undefined): { path: string; message: string }[] {
  if (!expression?.trim() || expression.includes('{{')) return [];
  try {
    compileCondition(expression, field);
    return [];
  } catch (e) {
    return [{ path: field, message: `is not a valid JSONata expression (${(e as Error).message})` }];
  }
}
