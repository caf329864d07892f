/**
 * The regular expressions of tenant JSONata (`/…/` in formulas, run conditions and extracts).
 *
 * JavaScriptCore's engine gives up silently at its backtracking limit: `/^(a+)+$/` on 34 a's and a
 * `!` answers "no match" after half a second, and that would become a `false` in a cell. So every
 * pattern RE2 can run goes to re2js, whose time is linear in the text and whose answers are exact.
 * The few it cannot (backreferences, lookaround) run on the JavaScript engine, where a "no match"
 * that took longer than BACKTRACK_SUSPECT_MS may be a give-up: it fails the evaluation instead of
 * answering (an error the user can act on, never a wrong value).
 */
import { RE2JS } from 're2js';

/** A no-match of the JavaScript engine slower than this is taken for its backtracking limit. */
export const BACKTRACK_SUSPECT_MS = 100;

/** The error JSONata carries out of the evaluation (its `code` is ours, its message what to do). */
export class RegexLimitError extends Error {
  readonly code = 'REGEX_LIMIT';
  constructor(source: string) {
    super(
      `the regular expression /${source.slice(0, 100)}/ backtracked past the engine's limit, so whether it matches is unknown; ` +
        'avoid nested repetition such as (a+)+ next to backreferences or lookarounds',
    );
  }
}

type Match = RegExpExecArray;

/** What JSONata asks of a RegexEngine: `lastIndex` and `exec` with the semantics of a global RegExp. */
export class LinearRegExp {
  lastIndex = 0;
  private readonly re2: ReturnType<typeof RE2JS.compile> | null;
  private readonly native: RegExp;

  constructor(pattern: RegExp) {
    // JSONata's parser builds global RegExps; keep the flag so exec honours lastIndex on the fallback.
    this.native = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    let re2: ReturnType<typeof RE2JS.compile> | null = null;
    try {
      re2 = RE2JS.compile(RE2JS.translateRegExp(pattern));
    } catch {
      re2 = null; // syntax RE2 does not have: the JavaScript engine, bounded below
    }
    this.re2 = re2;
  }

  exec(text: string): Match | null {
    return this.re2 ? this.execLinear(this.re2, text) : this.execNative(text);
  }

  private execLinear(re2: ReturnType<typeof RE2JS.compile>, text: string): Match | null {
    if (this.lastIndex > text.length) {
      this.lastIndex = 0;
      return null;
    }
    const m = re2.matcher(text);
    if (!m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: (string | undefined)[] = [];
    for (let i = 0; i <= m.groupCount(); i++) groups.push(m.group(i) ?? undefined);
    const match = Object.assign(groups, { index: m.start(), input: text, groups: undefined }) as unknown as Match;
    // As a global RegExp: the next search starts where this match ended (JSONata refuses empty matches).
    this.lastIndex = m.end();
    return match;
  }

  private execNative(text: string): Match | null {
    this.native.lastIndex = this.lastIndex;
    const started = performance.now();
    const match = this.native.exec(text);
    if (match === null && performance.now() - started > BACKTRACK_SUSPECT_MS) throw new RegexLimitError(this.native.source);
    this.lastIndex = this.native.lastIndex;
    return match;
  }
}
