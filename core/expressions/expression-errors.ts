import type { EvaluationLimits } from './expression-protocol.ts';

/** "1 s", "1.5 s", "250 ms": how a limit reads in a cell's error. */
export function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}

/** The message a cell shows when its expression hit the time bound. */
export const ranOver = (limits: Pick<EvaluationLimits, 'timeoutMs'>) => `expression ran over ${duration(limits.timeoutMs)}`;

/** A failure that a limit caused (JSONata's guardrails, the regex engine's backtracking, a stack overflow). */
export function isBoundFailure(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code;
  return e instanceof RangeError || code === 'D1011' || code === 'D1012' || code === 'D2014' || code === 'D2015' || code === 'REGEX_LIMIT';
}

/**
 * A JSONata failure as a user can act on it. JSONata throws plain objects with a `code` (D1011
 * stack, D1012 timeout, D2014/D2015 sequence size: the guardrails), others carry a message.
 */
export function describeFailure(e: unknown, limits: EvaluationLimits): string {
  const err = (e ?? {}) as { code?: string; message?: string; position?: number };
  switch (err.code) {
    case 'D1012':
      return ranOver(limits);
    case 'D1011':
      return `expression nested deeper than ${limits.depth} levels (endless recursion?)`;
    case 'D2014':
    case 'D2015':
      return `expression built a sequence of more than ${limits.sequence.toLocaleString('en-US')} items`;
  }
  if (e instanceof RangeError) return `expression nested too deep (${e.message})`;
  const where = err.position !== undefined ? ` (at ${err.position})` : '';
  return `expression failed: ${err.message ?? err.code ?? String(e)}${where}`;
}
