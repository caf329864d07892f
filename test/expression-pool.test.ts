import { afterAll, describe, expect, test } from 'bun:test';
import { ExpressionPool } from '../core/expressions/expression-pool.ts';

/** Runs `fn` while a 10 ms timer measures how long the event loop of this thread was held. */
async function longestStall<T>(fn: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last - 10);
    last = now;
  }, 10);
  try {
    return { result: await fn(), stallMs };
  } finally {
    clearInterval(timer);
  }
}

const ENDLESS = '($f := function($x){ $f($x + 1) }; $f(0))';
const HUGE_RANGES = '$count([1..10000000, 1..10000000, 1..10000000, 1..10000000])';
// Each $pad is one step that allocates 100,000 characters: memory grows faster than any time check.
const MEMORY_HOG = '$join([1..100000].$pad("", 100000))';
// Catastrophic backtracking: one native regex step (≈0.6 s here, cut short by the engine's own
// backtracking limit) that JSONata's guardrails cannot interrupt.
const BACKTRACKING = `$match("${'a'.repeat(48)}", /(a+)+b/)`;

describe('expression sandbox', () => {
  const pool = new ExpressionPool({ workers: 2, timeoutMs: 1000, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
  // The memory tests run with room in time: on a busy machine the hog grows slower than 1 s allows,
  // and the memory bound, not the clock, is what they are about.
  const roomy = new ExpressionPool({ workers: 2, timeoutMs: 10_000, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
  afterAll(() => Promise.all([pool.close(), roomy.close()]));

  test('an endless recursion ends as "ran over 1 s" while this thread keeps answering', async () => {
    const t0 = performance.now();
    const { result, stallMs } = await longestStall(() => pool.evaluate(ENDLESS, {}));
    expect(result).toEqual({ ok: false, error: 'expression ran over 1 s' });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(stallMs).toBeLessThan(100);
  });

  test('huge ranges are refused at once, before they take memory', async () => {
    const t0 = performance.now();
    expect(await pool.evaluate(HUGE_RANGES, {})).toEqual({ ok: false, error: 'expression built a sequence of more than 100,000 items' });
    expect(await pool.evaluate('$count([1..1000000].($ * 2))', {})).toMatchObject({
      ok: false,
      error: expect.stringContaining('sequence'),
    });
    expect(performance.now() - t0).toBeLessThan(500);
  });

  test('an expression that grows memory past the bound is stopped, and the memory comes back', async () => {
    const before = process.memoryUsage.rss();
    const { result, stallMs } = await longestStall(() => roomy.evaluate(MEMORY_HOG, {}));
    expect(result).toEqual({ ok: false, error: 'expression used more than 256 MB of memory' });
    expect(stallMs).toBeLessThan(100);
    Bun.gc(true);
    await Bun.sleep(300);
    expect(process.memoryUsage.rss() - before).toBeLessThan(200 * 1_048_576);
  });

  test('after a memory stop each input runs again alone: only the one that passes the bound alone fails', async () => {
    const slowRows = Array.from({ length: 6 }, (_, i) => ({ Name: `r${i}` }));
    // Each innocent row takes a moment, so it is running when the hog passes the memory bound.
    const slow = roomy.evaluateMany('($s := $sum([1..99999].($ * 2)); $s := $sum([1..99999].($ * 3)); Name)', slowRows);
    await Bun.sleep(20);
    const hog = roomy.evaluate(MEMORY_HOG, {});
    const [innocent, hogged] = await Promise.all([slow, hog]);
    expect(innocent).toEqual(slowRows.map((r) => ({ ok: true, value: r.Name })));
    expect(hogged).toEqual({ ok: false, error: 'expression used more than 256 MB of memory' });
  });

  test('a native step that outlasts the host deadline is stopped, and only its row fails', async () => {
    // With a 100 ms bound the host deadline (bound + 250 ms) falls inside the regex step.
    const quick = new ExpressionPool({ workers: 1, timeoutMs: 100, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
    try {
      const rows = [{ Name: 'a' }, { Name: 'b' }, { Name: 'c' }, { Name: 'd' }];
      const expression = `Name = "b" ? ${BACKTRACKING} : $uppercase(Name)`;
      const { result, stallMs } = await longestStall(() => quick.evaluateMany(expression, rows));
      expect(quick.stoppedThreads).toBe(1);
      expect(result).toEqual([
        { ok: true, value: 'A' },
        { ok: false, error: 'expression ran over 100 ms' },
        { ok: true, value: 'C' },
        { ok: true, value: 'D' },
      ]);
      expect(stallMs).toBeLessThan(100);
    } finally {
      await quick.close();
    }
  });

  test('after a stopped evaluation the pool goes on: many rows, in order, right', async () => {
    await pool.evaluate(ENDLESS, {});
    const rows = Array.from({ length: 2_500 }, (_, i) => ({ Name: `n${i}`, Employees: i }));
    const out = await pool.evaluateMany('Name & ":" & $string(Employees * 2)', rows);
    expect(out).toHaveLength(2_500);
    expect(out).toEqual(rows.map((_, i) => ({ ok: true, value: `n${i}:${i * 2}` })));
  });

  test('one caller’s big batch does not hold back a small one behind it', async () => {
    const big = pool.evaluateMany(
      '$sum([1..20000])',
      Array.from({ length: 2_000 }, () => ({})),
    );
    const t0 = performance.now();
    const small = await pool.evaluate('1 + 1', {});
    const smallMs = performance.now() - t0;
    expect(small).toEqual({ ok: true, value: 2 });
    await big;
    expect(smallMs).toBeLessThan(1000);
  });

  test('results that JSON cannot carry or that exceed a cell are refused; syntax errors name the position', async () => {
    expect(await pool.evaluate('function($x){ $x }', {})).toEqual({ ok: true, value: undefined });
    expect(await pool.evaluate('$pad("", 300000)', {})).toEqual({
      ok: false,
      error: 'expression result is 300002 bytes, over the 262144-byte limit of a cell',
    });
    expect(await pool.evaluate('Name &', {})).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^expression failed: .+ \(at \d+\)$/),
    });
    expect(await pool.evaluate('$status & ":" & x', { x: 'y' }, { status: 200 })).toEqual({ ok: true, value: '200:y' });
  });

  test('a closed pool refuses new work with an error the job queue retries', async () => {
    const closing = new ExpressionPool({ workers: 1, timeoutMs: 1000, maxMemoryBytes: 64 * 1_048_576, maxResultBytes: 1000 });
    const running = closing.evaluate(ENDLESS, {});
    await Bun.sleep(50);
    await closing.close();
    await expect(running).rejects.toMatchObject({ retryable: true });
    await expect(closing.evaluate('1', {})).rejects.toMatchObject({ retryable: true });
  });
});
