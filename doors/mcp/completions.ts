import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CompleteResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Kernel } from '../../core/kernel.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { operationData, RpcError } from './operation-call.ts';
import { PROMPTS } from './prompts.ts';
import { RESOURCE_TEMPLATES } from './resources.ts';

/** At most this many values per answer (MCP's limit), with `total` and `hasMore` telling the rest. */
const MAX_VALUES = 100;

const answer = (all: string[]): CompleteResult => ({
  completion: { values: all.slice(0, MAX_VALUES), total: all.length, hasMore: all.length > MAX_VALUES },
});

const startingWith = (values: string[], typed: string) => {
  const t = typed.toLowerCase();
  return values.filter((v) => v.toLowerCase().startsWith(t));
};

type Ref = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

/**
 * completion/complete (docs/mcp.md): builder and tool ids for the prompts' arguments, the caller's
 * project ids (matched by name or id) for the resource templates' `project_id`. An argument with
 * no completion, or a prompt or template this server does not have, is a JSON-RPC error.
 */
export async function complete(
  kernel: Kernel,
  op: (name: string) => AnyOperation,
  authInfo: AuthInfo | undefined,
  ref: Ref,
  argument: { name: string; value: string },
): Promise<CompleteResult> {
  const typed = argument.value ?? '';
  if (ref.type === 'ref/prompt') {
    const prompt = PROMPTS.find((p) => p.name === ref.name);
    if (!prompt) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt "${String(ref.name).slice(0, 64)}"`);
    if (argument.name === 'builder_id')
      return answer(
        startingWith(
          kernel.plugins.listBuilders().map((b) => b.id),
          typed,
        ),
      );
    if (argument.name === 'tool_id')
      return answer(
        startingWith(
          kernel.plugins.listTools().map((t) => t.id),
          typed,
        ),
      );
    if (prompt.arguments?.some((a) => a.name === argument.name)) return answer([]);
    throw new RpcError(ErrorCode.InvalidParams, `Prompt ${prompt.name} has no argument "${String(argument.name).slice(0, 64)}"`);
  }
  const template = RESOURCE_TEMPLATES.find((t) => t.uriTemplate === ref.uri);
  if (!template) throw new RpcError(ErrorCode.InvalidParams, `Unknown resource template "${String(ref.uri).slice(0, 200)}"`);
  if (argument.name === 'project_id') {
    const data = (await operationData(kernel, op('list_projects'), authInfo, {
      query: { limit: String(MAX_VALUES), ...(typed ? { name_search: typed } : {}) },
    })) as { projects: { id: string; name: string }[] };
    const byId = typed ? startingWith((await projectIds(kernel, op, authInfo)) ?? [], typed) : [];
    return answer([...new Set([...data.projects.map((p) => p.id), ...byId])]);
  }
  if (argument.name === 'page' || argument.name === 'page_size') return answer([]);
  throw new RpcError(ErrorCode.InvalidParams, `Template ${template.name} has no argument "${String(argument.name).slice(0, 64)}"`);
}

/** The caller's most recent project ids, for completing an id typed from its start. */
async function projectIds(kernel: Kernel, op: (name: string) => AnyOperation, authInfo: AuthInfo | undefined) {
  const data = (await operationData(kernel, op('list_projects'), authInfo, { query: { limit: String(MAX_VALUES) } })) as {
    projects: { id: string }[];
  };
  return data.projects.map((p) => p.id);
}
