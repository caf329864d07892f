import { BodyTooLarge, readTextLimited } from './request-checks.ts';
import type { TSchema } from '@sinclair/typebox';
import { ServiceError } from '../../core/errors.ts';
import type { CallInput } from '../../core/operations/call-input.ts';
import { isJsonQueryParam } from '../../core/operations/json-query.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { inexactNumberError, parseJsonExactly } from '../../core/schema/exact-json.ts';

/**
 * The REST door's half of the translation: an HTTP request into a call's input. Malformed JSON is
 * the operation's validation failure (422, or the status the spec names for it), found only when
 * the pipeline reads that part — after the caller's project is known to be theirs.
 */

/** The query parameters of an operation that carry URL-encoded JSON. */
export function jsonQueryNames(op: AnyOperation): Set<string> {
  const properties = (op.query?.properties ?? {}) as Record<string, TSchema>;
  return new Set(
    Object.entries(properties)
      .filter(([, prop]) => isJsonQueryParam(prop))
      .map(([name]) => name),
  );
}

/**
 * `text` parsed exactly (a number JSON would change is refused, never rounded); what fails is a
 * validation error with `status`, naming `what` and saying what to send instead.
 */
export function exactJson(text: string, what: string, status: number, hint = '', path?: string): unknown {
  let parsed: ReturnType<typeof parseJsonExactly>;
  try {
    parsed = parseJsonExactly(text);
  } catch (e) {
    const errors = path === undefined ? {} : { errors: [{ path, message: 'is not valid JSON' }] };
    throw new ServiceError(
      'validation_error',
      { message: `${what} is not valid JSON (${(e as Error).message})${hint}`, ...errors },
      { status },
    );
  }
  if (parsed.inexact) throw inexactNumberError(what, parsed.inexact, status);
  return parsed.value;
}

const parseJsonQuery = (op: AnyOperation, name: string, text: string): unknown =>
  exactJson(text, name, op.invalidStatus ?? 422, '; send a URL-encoded JSON array', name);

/** Query text as the URL carries it; a JSON parameter left blank counts as absent. */
export function restQuery(op: AnyOperation, url: string, jsonNames: Set<string>): CallInput['query'] {
  const query: CallInput['query'] = {};
  const start = url.indexOf('?');
  if (start < 0) return query;
  for (const [name, text] of new URLSearchParams(url.slice(start + 1))) {
    if (!jsonNames.has(name)) query[name] = text;
    else if (text.trim() !== '') query[name] = () => parseJsonQuery(op, name, text);
  }
  return query;
}

/**
 * Reads the body as text (refusing one over the limit) and parses it exactly when asked: a number
 * JSON would change is refused, never rounded. `emptyAs`: what an empty body means (else an error).
 */
export async function readJson(request: Request, maxBytes: number, invalidStatus = 422, emptyAs?: () => unknown): Promise<() => unknown> {
  let text: string;
  try {
    text = await readTextLimited(request, maxBytes);
  } catch (e) {
    if (e instanceof BodyTooLarge)
      throw new ServiceError('payload_too_large', `The body is larger than ${maxBytes} bytes (MAX_BODY_BYTES)`);
    throw e;
  }
  return () => {
    if (text.trim() === '') {
      if (emptyAs) return emptyAs();
      throw new ServiceError('validation_error', { message: 'The request body is empty; send a JSON object' }, { status: invalidStatus });
    }
    return exactJson(text, 'The body', invalidStatus);
  };
}
