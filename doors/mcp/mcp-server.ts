import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RequestSchema,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { newId } from '../../core/ids.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { AnyOperation, ProgressReporter } from '../../core/operations/operation.ts';
import { waitOn } from '../../core/services/project-work.ts';
import { runCall } from '../../core/operations/run-operation.ts';
import { inArgumentTerms } from './argument-names.ts';
import { outcomeEnvelope, success, toolResult } from './envelope.ts';
import { fitted } from './result-size.ts';
import { RpcError } from './operation-call.ts';
import { complete } from './completions.ts';
import { getPrompt, PROMPTS } from './prompts.ts';
import { listResources, RESOURCE_TEMPLATES, readResource } from './resources.ts';
import { callerOf } from './mcp-auth.ts';
import { taskHandle } from './mcp-tasks.ts';
import { type DecodedArguments, decodeArguments } from './tool-arguments.ts';
import type { McpTool } from './tool-table.ts';

export const INSTRUCTIONS =
  'Workflow Service: projects are tables of companies. Typical flow: list_builders, run_builder (builder_id + form_data_json, wait_seconds up to 50 to wait for the run), ' +
  'create_column with a tool from search_tools, run_pending_columns (wait_seconds again; wait_for_project to wait longer), then get_project_rows with format "values". ' +
  'Every result is a JSON envelope {"ok":true,"data":…} or {"ok":false,"error":true,"code":…,"detail":{…},"status_code":N}; data is what the REST operation of the same name answers. ' +
  'Arguments ending in _json are JSON text. Builders and paid tools spend credits (get_credits). Prompts give the typical flows; resources are workflow://projects/{id} and …/rows.';

/** The request id of the HTTP request that carries a tool call (set by the MCP host beside the caller). */
function requestIdOf(authInfo: AuthInfo | undefined): string {
  const id = authInfo?.extra?.requestId;
  return typeof id === 'string' ? id : newId();
}

/** What a tool call knows of its MCP request: the caller, the progress token, the way to notify, cancellation. */
export interface ToolCallExtra {
  authInfo?: AuthInfo;
  signal?: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification?: (notification: ServerNotification) => Promise<void>;
  /** The client takes a task handle for long work (MCP Tasks, modern era): no wait, a task instead. */
  asTask?: boolean;
}

/** notifications/progress for the request's progressToken, when it carries one (else nothing is sent). */
function progressReporter(extra: ToolCallExtra): ProgressReporter | undefined {
  const token = extra._meta?.progressToken;
  const send = extra.sendNotification;
  if (token === undefined || !send) return undefined;
  return (progress, total, message) =>
    void send({
      method: 'notifications/progress',
      params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message },
    }).catch(() => undefined);
}

/**
 * Aborted when the client goes away: the JSON-RPC cancellation, or the HTTP request itself (a JSON
 * answer has no stream whose end would tell; the MCP host puts the request's signal beside the caller).
 */
function callSignal(extra: ToolCallExtra): AbortSignal | undefined {
  const request = extra.authInfo?.extra?.signal as AbortSignal | undefined;
  const signals = [extra.signal, request].filter((s): s is AbortSignal => s !== undefined);
  return signals.length > 1 ? AbortSignal.any(signals) : signals[0];
}

/** The work a waitable call started: the project it created, or the one whose columns it ran (and which). */
async function workOf(kernel: Kernel, tool: McpTool, decoded: DecodedArguments, data: unknown, extra: ToolCallExtra) {
  const caller = callerOf(extra.authInfo);
  const created = tool.op.waitable === 'created';
  const projectId = created ? (data as { project_id?: string }).project_id : decoded.params.project_id;
  const project = caller.workspace && projectId ? await kernel.storage.projects.get(caller.workspace.id, projectId) : undefined;
  if (!project) return undefined;
  const colIds = created ? undefined : (decoded.body() as { col_ids?: string[] } | undefined)?.col_ids;
  return { project, colIds, created };
}

/** The project and columns a call's wait_seconds watches, waited for. */
async function waitAfter(kernel: Kernel, tool: McpTool, decoded: DecodedArguments, data: unknown, extra: ToolCallExtra) {
  const work = await workOf(kernel, tool, decoded, data, extra);
  if (!work) return undefined;
  return waitOn(kernel, work.project, decoded.waitSeconds ?? 0, work.colIds, {
    progress: progressReporter(extra),
    signal: callSignal(extra),
  });
}

/** Runs one tool call through the call pipeline, as REST runs the same operation, and wraps the outcome in an envelope. */
export async function callTool(
  kernel: Kernel,
  tool: McpTool,
  args: Record<string, unknown> | undefined,
  extra: ToolCallExtra,
): Promise<CallToolResult> {
  let decoded: DecodedArguments | undefined;
  // What is wrong with the arguments beyond the path ids is told after the ownership check, as
  // REST tells a bad body: the operation runs only once its arguments have passed.
  const op: AnyOperation = {
    ...tool.op,
    handler: (ctx) => {
      decoded?.check();
      return tool.op.handler(ctx);
    },
  };
  const outcome = await runCall(kernel, {
    op,
    requestId: requestIdOf(extra.authInfo),
    // Each tool call is one request against the plan's rate and monthly grant, as a REST call is.
    credentials: { caller: callerOf(extra.authInfo) },
    input: () => {
      decoded = decodeArguments(tool.op, tool.args, args);
      return decoded;
    },
    progress: progressReporter(extra),
    signal: callSignal(extra),
  });
  if (!outcome.ok) return toolResult(outcomeEnvelope({ ...outcome, failure: inArgumentTerms(outcome.failure, tool.renames) }));
  // A client that takes tasks gets one for the work the call started, instead of a wait.
  if (extra.asTask && tool.op.waitable && decoded) {
    const work = await workOf(kernel, tool, decoded, outcome.data, extra);
    if (work) {
      const total = work.created ? 0 : Number((outcome.data as { queued?: number }).queued ?? 0);
      const kind = work.created ? 'builder' : 'columns';
      return (await taskHandle(kernel, work.project, { kind, total, ...(work.colIds ? { colIds: work.colIds } : {}) })) as never;
    }
  }
  // wait_seconds: the work the call started, waited for here; the answer's data stays REST's.
  let wait: Awaited<ReturnType<typeof waitAfter>> | { ended: false; error: string } | undefined;
  if (decoded?.waitSeconds) {
    try {
      wait = await waitAfter(kernel, tool, decoded, outcome.data, extra);
    } catch (e) {
      // The write happened: its answer stands, and the wait says why it stopped (a retry would do the write twice).
      wait = { ended: false, error: `The wait stopped: ${(e as Error).message}; call wait_for_project to wait again` };
    }
  }
  const { envelope, text } = fitted(kernel, { ...success(outcome.data), ...(wait ? { wait } : {}) }, tool.op.hint === 'read');
  return toolResult(envelope, text);
}

/** The tool and arguments a tools/call names; bad params are -32602 with a short message. */
export function toolCallOf(params: unknown, byName: Map<string, McpTool>): { tool: McpTool; args?: Record<string, unknown> } {
  const invalid = (message: string) => new RpcError(ErrorCode.InvalidParams, message);
  const listing = `tools/list names the ${byName.size} tools`;
  if (typeof params !== 'object' || params === null) throw invalid('tools/call needs params {"name": "<tool>", "arguments": {…}}');
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name === '') throw invalid(`params.name must be a tool's name (a string); ${listing}`);
  const tool = byName.get(name);
  if (!tool) throw invalid(`Unknown tool "${name.length > 64 ? `${name.slice(0, 64)}…` : name}"; ${listing}`);
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw invalid(`params.arguments must be an object of the tool's arguments by name, or left out`);
  }
  return { tool, args: args as Record<string, unknown> | undefined };
}

/** tools/call with its params unchecked by the SDK (toolCallOf checks them). */
const ToolCallRequest = RequestSchema.extend({ method: CallToolRequestSchema.shape.method });

/** The server's name, as both protocol eras tell it. */
export const SERVER_INFO = { name: 'workflow-service', title: 'Workflow Service', version: '1.0.0' };

/** The operation of a tool by name, for the handlers that run operations outside tools/call (resources, completions). */
export function toolOperation(byName: Map<string, McpTool>): (name: string) => AnyOperation {
  return (name) => {
    const tool = byName.get(name);
    if (!tool) throw new Error(`no operation ${name} in the tool table`);
    return tool.op;
  };
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
  const server = new Server(SERVER_INFO, {
    // logging: the SDK answers logging/setLevel (the tools send no log messages yet). Resources
    // cannot be subscribed to: a stateless server has no session to notify.
    capabilities: { tools: { listChanged: false }, logging: {}, resources: {}, prompts: {}, completions: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: sharedValidator,
  });
  const listing = tools.map((t) => t.definition);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
  // Registered as Protocol registers any handler: Server's own registration checks tools/call
  // params with a schema whose failures answer -32603 with the validator's dump.
  Protocol.prototype.setRequestHandler.call(server, ToolCallRequest, async (request, extra) => {
    const { tool, args } = toolCallOf(request.params, byName);
    return callTool(kernel, tool, args, extra);
  });
  const op = toolOperation(byName);
  server.setRequestHandler(ListResourcesRequestSchema, (_request, extra) => listResources(kernel, op, extra.authInfo));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => readResource(kernel, op, extra.authInfo, request.params.uri));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) =>
    getPrompt(kernel.plugins, request.params.name, request.params.arguments),
  );
  server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    complete(kernel, op, extra.authInfo, request.params.ref, request.params.argument),
  );
  return server;
}
