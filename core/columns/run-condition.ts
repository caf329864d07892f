import jsonata from 'jsonata';
import { validationError } from '../errors.ts';
import type { Expressions } from '../expressions/expression-pool.ts';
import { withoutTemplates } from './templates.ts';

/**
 * Parses a JSONata run condition to refuse a syntax error with a 422 that points at the position.
 * Only parsing happens here (bounded by the expression's length); evaluation is sandboxed.
 */
export function compileCondition(expression: string, path = 'run_condition'): void {
  try {
    jsonata(expression);
  } catch (e) {
    const err = e as { message?: string; position?: number };
    throw validationError(
      `${path} is not a valid JSONata expression: ${err.message}${err.position !== undefined ? ` (at ${err.position})` : ''}`,
      [{ path, message: 'is not valid JSONata' }],
    );
  }
}

/**
 * Evaluates a run condition over rows (column name → value), in the expression sandbox. Truthy runs
 * the cell; false, null, empty results or an evaluation error (one that ran over its bounds too) skip
 * it. Example: `Website != null and $contains(Country, "FR")`.
 */
export async function conditionsHold(
  expressions: Expressions,
  expression: string,
  rows: Record<string, unknown>[],
): Promise<{ holds: boolean; reason?: string }[]> {
  const outcomes = await expressions.evaluateMany(expression, rows);
  return outcomes.map((outcome) => {
    if (!outcome.ok) return { holds: false, reason: `run condition failed: ${outcome.error}` };
    const holds = Array.isArray(outcome.value) ? outcome.value.length > 0 : Boolean(outcome.value);
    return holds ? { holds } : { holds, reason: `run condition is false: ${expression}` };
  });
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

/** Every field name in a JSONata AST (path steps, backquoted names included). */
function namesIn(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const n of node) namesIn(n, into);
  else if (node && typeof node === 'object') {
    const n = node as { type?: unknown; value?: unknown };
    if (n.type === 'name' && typeof n.value === 'string') into.add(n.value);
    for (const v of Object.values(node)) namesIn(v, into);
  }
}

/**
 * Whether a JSONata expression over the row (a run condition, a formula) reads `name` as a field,
 * anywhere in it. `{{Column}}` templates are values, not fields. An expression that does not parse
 * reads every name it holds as text (the answer errs towards "yes").
 */
export function expressionReads(expression: string, name: string): boolean {
  let ast: unknown;
  try {
    ast = jsonata(withoutTemplates(expression, 'null')).ast();
  } catch {
    return expression.includes(name);
  }
  const names = new Set<string>();
  namesIn(ast, names);
  return names.has(name);
}
