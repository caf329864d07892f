import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode } from '../../core/errors.ts';
import { type Failure, failureOf, type Outcome } from '../../core/operations/outcome.ts';

/** The MCP result envelopes of the spec: every tool answers one of these, as text and as structuredContent. */
export interface SuccessEnvelope {
  ok: true;
  data: unknown;
}

export interface ErrorEnvelope {
  ok: false;
  error: true;
  code: ErrorCode;
  detail: Record<string, unknown>;
  status_code: number;
}

export type Envelope = SuccessEnvelope | ErrorEnvelope;

export const success = (data: unknown): SuccessEnvelope => ({ ok: true, data });

/**
 * A failure as MCP reports it: the code and status REST would answer (status_code), the detail
 * as an object (a plain message becomes `{message}`), and the request id when the log has more.
 */
export function failureEnvelope(failure: Failure): ErrorEnvelope {
  const detail = typeof failure.detail === 'string' ? { message: failure.detail } : failure.detail;
  return {
    ok: false,
    error: true,
    code: failure.code,
    detail: failure.requestId ? { ...detail, request_id: failure.requestId } : detail,
    status_code: failure.status,
  };
}

/** An outcome of the call pipeline as an envelope. */
export function outcomeEnvelope(outcome: Outcome): Envelope {
  return outcome.ok ? success(outcome.data) : failureEnvelope(outcome.failure);
}

/** Any failure outside the pipeline (authentication of the HTTP request, the app's onError), mapped as the pipeline maps it. */
export function errorEnvelope(e: unknown, requestId: string): ErrorEnvelope {
  return failureEnvelope(failureOf(e, requestId));
}

/** One text content holding the envelope's JSON (`text`, when already written), the same object as structuredContent, isError on errors. */
export function toolResult(envelope: Envelope, text = JSON.stringify(envelope)): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    structuredContent: { ...envelope },
    ...(envelope.ok ? {} : { isError: true }),
  };
}
