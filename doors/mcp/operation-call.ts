import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { newId } from '../../core/ids.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { CallInput } from '../../core/operations/call-input.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { runCall } from '../../core/operations/run-operation.ts';
import { callerOf } from './mcp-auth.ts';

/**
 * A JSON-RPC error as the SDK sends it (its `code`, its `message`). Not an McpError: that one's
 * message starts "MCP error -32602:", and every client prefixes what it receives with that again.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** JSON-RPC code of an unknown resource (MCP: "Resource not found"). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * Runs an operation of the table for an MCP request that is not a tool call (resources/read,
 * completion/complete): the same pipeline — authentication, plan and rate, ownership — and its
 * data, or a JSON-RPC error in the request's terms (a missing project is "not found").
 */
export async function operationData(
  kernel: Kernel,
  op: AnyOperation,
  authInfo: AuthInfo | undefined,
  input: { params?: Record<string, string>; query?: Record<string, string | (() => unknown)> },
  notFoundCode: number = ErrorCode.InvalidParams,
): Promise<unknown> {
  const requestId = typeof authInfo?.extra?.requestId === 'string' ? authInfo.extra.requestId : newId();
  const outcome = await runCall(kernel, {
    op,
    requestId,
    credentials: { caller: callerOf(authInfo) },
    input: (): CallInput => ({ params: input.params ?? {}, query: input.query ?? {}, body: () => undefined }),
  });
  if (outcome.ok) return outcome.data;
  const { code, status, detail } = outcome.failure;
  const message = typeof detail === 'string' ? detail : String((detail as { message?: unknown }).message ?? code);
  if (code === 'not_found') throw new RpcError(notFoundCode, message);
  if (status === 400 || status === 422) throw new RpcError(ErrorCode.InvalidParams, message);
  throw new RpcError(ErrorCode.InternalError, `${message} (${code}, ${status})`);
}
