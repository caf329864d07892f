import { afterAll, describe, expect, test } from 'bun:test';
import { ExpressionPool } from '../core/expressions/expression-pool.ts';

/**
 * Runs `fn` while a 10 ms timer ticks on this thread: answers how often it ticked. An evaluation on
 * this thread would hold it for the whole evaluation (a second or more), leaving a tick or two.
 */
async function ticksDuring<T>(fn: () => Promise<T>): Promise<{ result: T; ticks: number }> {
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
  }, 10);
  try {
    return { result: await fn(), ticks };
  } finally {
    clearInterval(timer);
  }
}

const ENDLESS = '($f := function($x){ $f($x + 1) }; $f(0))';
const HUGE_RANGES = '$count([1..10000000, 1..10000000, 1..10000000, 1..10000000])';
// Each $pad is one step that allocates 100,000 characters: memory grows faster than any time check.
const MEMORY_HOG = '$join([1..100000].$pad("", 100000))';
// Catastrophic backtracking with a backreference (RE2 has none, so it runs on the JavaScript engine):
// one native regex step (≈0.6 s here, cut short by the engine's own backtracking limit) that
// JSONata's guardrails cannot interrupt.
const BACKTRACKING = `$match("${'a'.repeat(48)}", /(a+)+b\\1/)`;
const HOSTILE_INPUT = `${'a'.repeat(34)}!`;

describe('expression sandbox', () => {
  const pool = new ExpressionPool({ workers: 2, timeoutMs: 1000, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
  // The memory tests run with room in time: on a busy machine the hog grows slower than 1 s allows,
  // and the memory bound, not the clock, is what they are about.
  const roomy = new ExpressionPool({ workers: 2, timeoutMs: 10_000, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
  afterAll(() => Promise.all([pool.close(), roomy.close()]));

  test('an endless recursion ends as "ran over 1 s" while this thread keeps answering', async () => {
    const { result, ticks } = await ticksDuring(() => pool.evaluate(ENDLESS, {}));
    expect(result).toEqual({ ok: false, error: 'expression ran over 1 s', bound: true });
    expect(ticks).toBeGreaterThan(10);
  });

  test('huge ranges are refused by the sequence bound, before they take memory or time', async () => {
    expect(await pool.evaluate(HUGE_RANGES, {})).toEqual({
      ok: false,
      error: 'expression built a sequence of more than 100,000 items',
      bound: true,
    });
    expect(await pool.evaluate('$count([1..1000000].($ * 2))', {})).toMatchObject({
      ok: false,
      error: expect.stringContaining('sequence'),
    });
  });

  test('an expression that grows memory past the bound is stopped, and the memory comes back', async () => {
    const before = process.memoryUsage.rss();
    const { result, ticks } = await ticksDuring(() => roomy.evaluate(MEMORY_HOG, {}));
    expect(result).toEqual({ ok: false, error: 'expression used more than 256 MB of memory', bound: true });
    expect(ticks).toBeGreaterThan(10);
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
    expect(hogged).toEqual({ ok: false, error: 'expression used more than 256 MB of memory', bound: true });
  });

  test('a native step that outlasts the host deadline is stopped, and only its row fails', async () => {
    // With a 100 ms bound the host deadline (bound + 250 ms) falls inside the regex step.
    const quick = new ExpressionPool({ workers: 1, timeoutMs: 100, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
    try {
      const rows = [{ Name: 'a' }, { Name: 'b' }, { Name: 'c' }, { Name: 'd' }];
      const expression = `Name = "b" ? ${BACKTRACKING} : $uppercase(Name)`;
      const { result, ticks } = await ticksDuring(() => quick.evaluateMany(expression, rows));
      expect(quick.stoppedThreads).toBe(1);
      expect(result).toEqual([
        { ok: true, value: 'A' },
        { ok: false, error: 'expression ran over 100 ms', bound: true },
        { ok: true, value: 'C' },
        { ok: true, value: 'D' },
      ]);
      expect(ticks).toBeGreaterThan(5);
    } finally {
      await quick.close();
    }
  });

  test('a catastrophic regex gets the exact answer on every input alike: RE2 runs it in linear time', async () => {
    const inputs = Array.from({ length: 20 }, (_, i) => ({ s: i % 2 ? HOSTILE_INPUT : 'a'.repeat(34) }));
    const out = await pool.evaluateMany('$contains(s, /^(a+)+$/)', inputs);
    expect(out).toEqual(inputs.map((_, i) => ({ ok: true, value: i % 2 === 0 })));
    // Matches, groups, replace and split read the same as with JavaScript's engine.
    expect(await pool.evaluate('$match("🍮ab aB", /(b)(x)?/i).{"m": match, "i": index, "g": groups}', {})).toEqual({
      ok: true,
      value: [
        { m: 'b', i: 3, g: ['b', null] },
        { m: 'B', i: 6, g: ['B', null] },
      ],
    });
    expect(await pool.evaluate('{"r": $replace("a1b22c", /\\d+/, "#"), "s": $split("a, b,c", /,\\s*/)}', {})).toEqual({
      ok: true,
      value: { r: 'a#b#c', s: ['a', 'b', 'c'] },
    });
  });

  test('a regex that backtracks past the engine\'s limit is an error on every input, never "no match"; the call stops early', async () => {
    const inputs = Array.from({ length: 20 }, () => ({ s: HOSTILE_INPUT }));
    const skippedBefore = roomy.skippedInputs;
    const out = await roomy.evaluateMany('$contains(s, /^(a+)+b\\1$/)', inputs);
    expect(out).toHaveLength(20);
    for (const o of out) {
      expect(o.ok).toBe(false);
      expect(o).toHaveProperty('bound', true);
      expect((o as { error: string }).error).toContain('backtracked past the engine');
    }
    // After three inputs in a row ran into the limit, the other seventeen failed at once with the same reason.
    expect(roomy.skippedInputs - skippedBefore).toBe(17);
    expect(new Set(out.map((o) => (o as { error: string }).error)).size).toBe(1);
  });

  test('a call whose inputs keep running over the time bound stops after three: its other inputs fail with the same reason', async () => {
    const skippedBefore = pool.skippedInputs;
    const out = await pool.evaluateMany(
      ENDLESS,
      Array.from({ length: 20 }, () => ({})),
    );
    expect(out).toEqual(Array.from({ length: 20 }, () => ({ ok: false, error: 'expression ran over 1 s', bound: true })));
    expect(pool.skippedInputs - skippedBefore).toBe(17);
    // Ordinary failures are not limits: every input runs and fails on its own terms.
    const plain = await pool.evaluateMany(
      '$number("x")',
      Array.from({ length: 5 }, () => ({})),
    );
    expect(plain.every((o) => !o.ok && !('bound' in o))).toBe(true);
    expect(pool.skippedInputs - skippedBefore).toBe(17);
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
    let bigDone = false;
    void big.then(() => {
      bigDone = true;
    });
    const small = await pool.evaluate('1 + 1', {});
    expect(small).toEqual({ ok: true, value: 2 });
    expect(bigDone).toBe(false); // answered between the big batch's chunks, not after them
    await big;
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

  test('inputs and results cross to the threads intact: quotes, newlines, unicode, nested values, a missing input', async () => {
    const row = { Name: 'Ça "va"\n\u2028 ok', nested: { list: [1, 2.5, null, true] }, empty: '' };
    expect(await pool.evaluate('$', row)).toEqual({ ok: true, value: row });
    expect(await pool.evaluate('Name & "|" & $string(nested.list)', row)).toEqual({
      ok: true,
      value: 'Ça "va"\n\u2028 ok|[1,2.5,null,true]',
    });
    // JSON has no `undefined`: such an input still reaches the sandbox as "no input".
    expect(await pool.evaluateMany('$exists($)', [undefined, {}])).toEqual([
      { ok: true, value: false },
      { ok: true, value: true },
    ]);
    expect(await pool.evaluate('$error("bad \\"thing\\"")', {})).toEqual({ ok: false, error: 'expression failed: bad "thing" (at 7)' });
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

describe('a stopped job stops its evaluations', () => {
  test('an aborted signal fails the inputs not yet answered at once and frees their threads', async () => {
    const pool = new ExpressionPool({ workers: 1, timeoutMs: 5_000, maxMemoryBytes: 256 * 1_048_576, maxResultBytes: 262_144 });
    try {
      const controller = new AbortController();
      const endless = '($f := function($x){ $f($x + 1) }; $f(0))';
      const running = pool.evaluateMany(
        endless,
        Array.from({ length: 20 }, () => ({})),
        undefined,
        controller.signal,
      );
      await Bun.sleep(100);
      const before = pool.stoppedThreads;
      controller.abort(new Error('the project was deleted'));
      const out = await running;
      expect(out).toHaveLength(20);
      expect(out.every((o) => !o.ok && o.error === 'stopped: the project was deleted')).toBe(true);
      expect(pool.stoppedThreads).toBe(before + 1); // the thread evaluating it was ended, not left to its 5 s
      // The pool goes on.
      expect(await pool.evaluate('1 + 1', {})).toEqual({ ok: true, value: 2 });
    } finally {
      await pool.close();
    }
  });
});
