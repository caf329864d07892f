import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { createMcpHandler, fromJsonSchema, Server, type ServerContext } from '@modelcontextprotocol/server';
import type { Kernel } from '../../core/kernel.ts';
import { complete } from './completions.ts';
import { callTool, INSTRUCTIONS, SERVER_INFO, type ToolCallExtra, toolCallOf, toolOperation } from './mcp-server.ts';
import { cancelWorkTask, getTask, requireTasks, TASKS_EXTENSION, updateWorkTask, wantsTasks } from './mcp-tasks.ts';
import { getPrompt, PROMPTS } from './prompts.ts';
import { listResources, RESOURCE_TEMPLATES, readResource } from './resources.ts';
import { listenFeed } from './mcp-listen.ts';
import type { McpTool } from './tool-table.ts';

/**
 * MCP 2026-07-28, the modern era: no handshake and no session; every request carries its protocol
 * version, client capabilities and identity in `_meta`, `server/discover` says what the server
 * speaks, `Mcp-Method`/`Mcp-Name` headers are checked against the body (-32020), an unknown
 * version is refused with the versions spoken (-32022), results carry `resultType`, and list
 * results say how long they may be cached (`ttlMs`, `cacheScope`). The official SDK's 2.x line
 * (`@modelcontextprotocol/server`) speaks all of that; this module only registers the same
 * handlers the legacy era has (mcp-server.ts), so every operation stays defined once.
 */

const TASK_ID_PARAMS = fromJsonSchema<{ taskId: string }>({
  type: 'object',
  properties: { taskId: { type: 'string', minLength: 1, maxLength: 200 } },
  required: ['taskId'],
});

/** How long a list a client fetched stays good: the tool, prompt and template lists only change with a deploy. */
const STATIC_LIST = { ttlMs: 300_000, cacheScope: 'public' as const };

/** What a legacy handler's `extra` held, from the modern request context. */
function extraOf(ctx: ServerContext, asTask = false): ToolCallExtra {
  const meta = ctx.mcpReq._meta as { progressToken?: string | number } | undefined;
  return {
    authInfo: ctx.http?.authInfo as AuthInfo | undefined,
    signal: ctx.mcpReq.signal,
    ...(meta?.progressToken !== undefined ? { _meta: { progressToken: meta.progressToken } } : {}),
    sendNotification: (n: ServerNotification) => ctx.mcpReq.notify(n as never),
    asTask,
  };
}

/** A fresh server for one modern request (the handler makes one per request, as the legacy era does). */
function modernServer(kernel: Kernel, tools: McpTool[], byName: Map<string, McpTool>): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: false },
      // subscribe: a project's resources can be listened to (mcp-listen.ts).
      resources: { subscribe: true },
      prompts: {},
      completions: {},
      extensions: { [TASKS_EXTENSION]: {} },
    },
    instructions: INSTRUCTIONS,
    cacheHints: {
      'tools/list': STATIC_LIST,
      'prompts/list': STATIC_LIST,
      'resources/templates/list': STATIC_LIST,
      // A workspace's projects: its own, and they change.
      'resources/list': { ttlMs: 0, cacheScope: 'private' },
      'resources/read': { ttlMs: 0, cacheScope: 'private' },
    },
  });
  const listing = tools.map((t) => t.definition);
  const op = toolOperation(byName);
  const authOf = (ctx: ServerContext) => ctx.http?.authInfo as AuthInfo | undefined;
  server.setRequestHandler('tools/list', async () => ({ tools: listing }) as never);
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { tool, args } = toolCallOf(request.params, byName);
    const asTask = wantsTasks(server.getClientCapabilities());
    return (await callTool(kernel, tool, args, extraOf(ctx, asTask))) satisfies CallToolResult as never;
  });
  // Registered with their params' schema: the SDK dispatches an extension's methods only so.
  server.setRequestHandler('tasks/get', { params: TASK_ID_PARAMS }, async (params, ctx) => {
    requireTasks(server.getClientCapabilities());
    return getTask(kernel, authOf(ctx), (params as { taskId: string }).taskId);
  });
  server.setRequestHandler('tasks/cancel', { params: TASK_ID_PARAMS }, async (params, ctx) => {
    requireTasks(server.getClientCapabilities());
    return cancelWorkTask(kernel, authOf(ctx), (params as { taskId: string }).taskId);
  });
  server.setRequestHandler('tasks/update', { params: TASK_ID_PARAMS }, async (params, ctx) => {
    requireTasks(server.getClientCapabilities());
    return updateWorkTask(kernel, authOf(ctx), (params as { taskId: string }).taskId);
  });
  server.setRequestHandler('resources/list', async (_request, ctx) => (await listResources(kernel, op, authOf(ctx))) as never);
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: RESOURCE_TEMPLATES }) as never);
  server.setRequestHandler(
    'resources/read',
    async (request, ctx) => (await readResource(kernel, op, authOf(ctx), request.params.uri)) as never,
  );
  server.setRequestHandler('prompts/list', async () => ({ prompts: PROMPTS }) as never);
  server.setRequestHandler(
    'prompts/get',
    async (request) => (await getPrompt(kernel.plugins, request.params.name, request.params.arguments)) as never,
  );
  server.setRequestHandler(
    'completion/complete',
    async (request, ctx) => (await complete(kernel, op, authOf(ctx), request.params.ref as never, request.params.argument)) as never,
  );
  return server;
}

/**
 * The handler of modern-era requests (legacy ones are answered by mcp-app.ts's own path, never
 * here), and the feed of project events into its `subscriptions/listen` streams.
 */
export function modernMcp(kernel: Kernel, tools: McpTool[], byName: Map<string, McpTool>) {
  const handler = createMcpHandler(() => modernServer(kernel, tools, byName), {
    legacy: 'reject',
    responseMode: 'auto',
    maxRequestBodySize: kernel.config.maxBodyBytes,
  });
  return { handler, feed: listenFeed(kernel, (uri) => handler.notify.resourceUpdated(uri)) };
}
