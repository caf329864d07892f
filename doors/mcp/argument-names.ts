import type { Failure } from '../../core/operations/outcome.ts';
import { type ArgumentSpec, inArgumentsAlready } from './tool-arguments.ts';

/**
 * Validation errors come from the pipeline and the handlers in REST's words: the body field
 * `form_data`, "Invalid body: …". A tool's caller knows its arguments (`form_data_json`), so the
 * MCP door says those instead.
 */

/** REST field → tool argument, for the arguments named otherwise (`<field>_json`). */
export function renamedFields(specs: ArgumentSpec[]): Map<string, string> {
  return new Map(specs.filter((s) => s.field !== '' && s.name !== s.field).map((s) => [s.field, s.name]));
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const headOf = (path: string) => /^[^.[]+/.exec(path)?.[0] ?? '';

/** `form_data.companies` → `form_data_json.companies`; paths of other fields stay. */
function renamedPath(path: string, renames: Map<string, string>): string {
  const head = headOf(path);
  const name = renames.get(head);
  return name ? name + path.slice(head.length) : path;
}

/**
 * The message with each renamed field it refers to as a field (the head of an error path, its
 * first word, or followed by `[` or `.`) in the argument's name; the same word in prose ("rows per
 * project") or inside a quoted column name stays.
 */
function renamedMessage(message: string, heads: Set<string>, renames: Map<string, string>): string {
  let out = message.replace(/^Invalid (body|query parameters|path parameters): /, 'Invalid arguments: ');
  for (const [field, name] of renames) {
    const f = escaped(field);
    const named = heads.has(field) || new RegExp(`^${f}\\b|(?<![\\w."'])${f}[[.]`).test(message);
    if (named) out = out.replace(new RegExp(`(?<![\\w."'])${f}(?![\\w"'])`, 'g'), name);
  }
  return out;
}

/** A validation failure in the tool's terms (its argument names); other failures as they are. */
export function inArgumentTerms(failure: Failure, renames: Map<string, string>): Failure {
  if (failure.code !== 'validation_error' || typeof failure.detail === 'string') return failure;
  if (inArgumentsAlready(failure.detail)) return failure;
  const errors = Array.isArray(failure.detail.errors) ? (failure.detail.errors as { path?: unknown }[]) : [];
  const heads = new Set(errors.map((e) => (typeof e.path === 'string' ? headOf(e.path) : '')));
  const detail = Object.fromEntries(
    Object.entries(failure.detail).map(([key, value]) => {
      if (key === 'message' && typeof value === 'string') return [key, renamedMessage(value, heads, renames)];
      if (key === 'errors' && Array.isArray(value))
        return [key, errors.map((e) => (typeof e.path === 'string' ? { ...e, path: renamedPath(e.path, renames) } : e))];
      return [key, value];
    }),
  );
  return { ...failure, detail };
}
