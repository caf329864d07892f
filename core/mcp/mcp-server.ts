import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { newId } from '../ids.ts';
import type { Kernel } from '../kernel.ts';
import { runCall } from '../operations/run-operation.ts';
import { outcomeEnvelope, toolResult } from './envelope.ts';
import { callerOf } from './mcp-auth.ts';
import { decodeArguments } from './tool-arguments.ts';
import type { McpTool } from './tool-table.ts';

const INSTRUCTIONS =
  'Workflow Service: projects are tables of companies. Typical flow: list_builders, run_builder (builder_id + form_data_json), ' +
  'poll get_project until builder_status.type is completed, create_column with a tool from list_tools/search_tools, ' +
  'run_pending_columns, then read the filled cells with get_project_rows. Every result is a JSON envelope {"ok":true,"data":…} ' +
  'or {"ok":false,"error":true,"code":…,"detail":{…},"status_code":N}. Arguments ending in _json are JSON text. ' +
  'Builders and paid tools spend credits (get_credits).';

/** The request id of the HTTP request that carries a tool call (set by the MCP host beside the caller). */
function requestIdOf(authInfo: AuthInfo | undefined): string {
  const id = authInfo?.extra?.requestId;
  return typeof id === 'string' ? id : newId();
}

/** Runs one tool call through the call pipeline, as REST runs the same operation, and wraps the outcome in an envelope. */
export async function callTool(
  kernel: Kernel,
  tool: McpTool,
  args: Record<string, unknown> | undefined,
  authInfo: AuthInfo | undefined,
): Promise<CallToolResult> {
  const outcome = await runCall(kernel, {
    op: tool.op,
    requestId: requestIdOf(authInfo),
    // Each tool call is one request against the plan's rate and monthly grant, as a REST call is.
    credentials: { caller: callerOf(authInfo) },
    input: () => decodeArguments(tool.args, args),
  });
  return toolResult(outcomeEnvelope(outcome));
}

/**
 * The server's JSON Schema validator (used by the SDK for elicitation only). Each SDK server would
 * otherwise build its own Ajv instance, the largest cost of a stateless request; it holds no
 * per-client state, so one per process is shared.
 */
const sharedValidator = new AjvJsonSchemaValidator();

/**
 * A fresh MCP server for one HTTP request (stateless mode: nothing survives the request, so any
 * MCP process can serve any client). The tool list is computed once at start-up and shared.
 */
export function createMcpServer(kernel: Kernel, tools: McpTool[], byName: Map<string, McpTool>): Server {
  const server = new Server(
    { name: 'workflow-service', title: 'Workflow Service', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: sharedValidator,
    },
  );
  const listing = tools.map((t) => t.definition);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}"; call tools/list for the ${tools.length} tools`);
    return callTool(kernel, tool, request.params.arguments, extra.authInfo);
  });
  return server;
}
