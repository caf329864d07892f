import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type ErrorCode, ServiceError } from '../errors.ts';
import { log } from '../log.ts';
import { ProviderError } from '../plugins/provider-http.ts';

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
 * Maps any failure to the error envelope, the MCP twin of the REST error body: a ServiceError keeps
 * its code and status; a provider failure is `http_error`; anything else is `internal_error`
 * with a request id to find in the log, and no message or stack of its own.
 */
export function errorEnvelope(e: unknown, requestId: string): ErrorEnvelope {
  if (e instanceof ServiceError) {
    const detail = typeof e.detail === 'string' ? { message: e.detail } : e.detail;
    return { ok: false, error: true, code: e.code, detail, status_code: e.status };
  }
  if (e instanceof ProviderError) {
    log.warn('upstream provider failed', { request_id: requestId, error: e.message, upstream_status: e.status });
    return { ok: false, error: true, code: 'http_error', detail: { message: e.message, upstream_status: e.status, retryable: e.retryable }, status_code: 502 };
  }
  const err = e as Error;
  log.error('MCP tool call failed', { request_id: requestId, error: err?.message, stack: err?.stack });
  return {
    ok: false,
    error: true,
    code: 'internal_error',
    detail: { message: `Internal error; the server log has the details under request ${requestId}`, request_id: requestId },
    status_code: 500,
  };
}

/** One text content holding the envelope's JSON, the same object as structuredContent, isError on errors. */
export function toolResult(envelope: Envelope): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    ...(envelope.ok ? {} : { isError: true }),
  };
}
