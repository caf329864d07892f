import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';

/**
 * The answer the model gives through its `answer` function, `{answer, sources}`, and its checks
 * against the user's output schema (ajv: the user's schema may be any JSON Schema, draft-07 style).
 */

export interface Source {
  url: string;
  quote: string;
}

export interface Research {
  answer: unknown;
  sources: Source[];
}

/** Characters of an output schema, as JSON, at most: it goes into every request. */
export const MAX_SCHEMA_CHARS = 20_000;
const MAX_SOURCES = 10;

/**
 * Patterns of a tenant's schema run on re2js, in time linear in the text: a pattern such as
 * `(a+)+$` would otherwise let one answer hold the job's thread. A pattern RE2 cannot run
 * (backreferences, lookaround) is refused when the schema is compiled.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const re = RE2JS.compile(RE2JS.translateRegExp(new RegExp(pattern, flags)));
    return { test: (text: string) => re.matcher(text).find() };
  },
  { code: 'RE2JS' },
);

// strict: false — users write schemas for models (with keywords like "examples" or "title" anywhere).
const ajv = new Ajv({ allErrors: true, strict: false, code: { regExp: linearRegExp } });
addFormats(ajv);

/**
 * The parameters of the `answer` function: the user's schema as `answer`, beside the sources. Its
 * `$defs`/`definitions` move to the root so that its `#/$defs/…` references still resolve there.
 */
export function answerParameters(outputSchema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _s, $id: _i, $defs, definitions, ...answer } = outputSchema;
  return {
    type: 'object',
    properties: {
      answer,
      sources: {
        type: 'array',
        maxItems: MAX_SOURCES,
        description: 'The pages the answer rests on, each with a short passage copied word for word from it.',
        items: {
          type: 'object',
          properties: {
            url: { type: 'string', description: 'A URL you read or a search returned.' },
            quote: { type: 'string', description: 'A passage of that page (or its search snippet), word for word.' },
          },
          required: ['url', 'quote'],
          additionalProperties: false,
        },
      },
    },
    required: ['answer', 'sources'],
    additionalProperties: false,
    ...($defs !== undefined ? { $defs } : {}),
    ...(definitions !== undefined ? { definitions } : {}),
  };
}

/** Compiled checks, by schema text: every row of a column shares one schema. */
const compiled = new Map<string, ValidateFunction>();

function validatorOf(outputSchema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(outputSchema);
  let check = compiled.get(key);
  if (!check) {
    check = ajv.compile(answerParameters(outputSchema));
    if (compiled.size >= 100) compiled.delete(compiled.keys().next().value as string);
    compiled.set(key, check);
  }
  return check;
}

/** Why an output schema cannot be used (for checkConfig), or null. */
export function schemaProblem(outputSchema: Record<string, unknown>): string | null {
  if (JSON.stringify(outputSchema).length > MAX_SCHEMA_CHARS) return `must be at most ${MAX_SCHEMA_CHARS} characters of JSON`;
  if (!ajv.validateSchema(outputSchema)) {
    const errors = (ajv.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    return `is not a valid JSON Schema: ${errors.join('; ')}`;
  }
  try {
    validatorOf(outputSchema);
    return null;
  } catch (e) {
    return `is not a usable JSON Schema: ${(e as Error).message.slice(0, 300)}`;
  }
}

/** "/answer/employees must be integer", naming the property an additionalProperties error is about. */
function describe(e: ErrorObject): string {
  const extra = e.keyword === 'additionalProperties' ? ` ("${String(e.params.additionalProperty)}")` : '';
  return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${extra}`;
}

/** A URL as compared with the ones the agent saw: no fragment, no trailing slash, host in lower case. */
export function urlKey(url: string): string | null {
  try {
    const u = new URL(url);
    u.hash = '';
    return `${u.protocol}//${u.host.toLowerCase()}${u.pathname.replace(/\/+$/, '')}${u.search}`;
  } catch {
    return null;
  }
}

/**
 * The answer call's arguments checked: parsed, fitting the output schema, and citing only pages
 * the agent saw (`seen`: URL keys of search results and pages read). Answers the research, or
 * what is wrong, one line per problem.
 */
export function checkAnswer(
  outputSchema: Record<string, unknown>,
  args: string,
  seen: Set<string>,
): { ok: true; research: Research } | { ok: false; problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { ok: false, problems: ['the arguments are not JSON'] };
  }
  const check = validatorOf(outputSchema);
  if (!check(parsed)) return { ok: false, problems: (check.errors ?? []).slice(0, 10).map(describe) };
  const research = parsed as Research;
  const unseen = research.sources.flatMap((s, i) =>
    seen.has(urlKey(s.url) ?? '') ? [] : [`/sources/${i}/url ${s.url.slice(0, 200)} is not a page you read or a search returned`],
  );
  return unseen.length ? { ok: false, problems: unseen } : { ok: true, research };
}
