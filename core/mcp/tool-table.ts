import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnyOperation } from '../operations/operation.ts';
import type { PluginRegistry } from '../plugins/registry.ts';
import { renamedFields } from './argument-names.ts';
import { type JsonSchema, type ToolArguments, toolArguments } from './tool-arguments.ts';

/** An operation of the table as an MCP tool: its listing and how its arguments map back. */
export interface McpTool {
  op: AnyOperation;
  args: ToolArguments;
  definition: Tool;
  /** REST field → argument, for validation errors told in the tool's terms. */
  renames: Map<string, string>;
}

/** The envelope as JSON Schema, `data` being the operation's REST response schema. */
function envelopeSchema(op: AnyOperation): Tool['outputSchema'] {
  return {
    type: 'object',
    properties: {
      ok: { type: 'boolean' },
      data: JSON.parse(JSON.stringify(op.response)) as JsonSchema,
      error: { type: 'boolean' },
      code: { type: 'string' },
      detail: { type: 'object' },
      status_code: { type: 'integer' },
    },
    required: ['ok'],
  };
}

/**
 * Generates one MCP tool per operation (../shared/DESIGN.md §1: the REST routes and the tools come from the
 * same table). The builder_id and tool_id arguments list the ids registered at start-up.
 */
export function buildTools(ops: AnyOperation[], plugins: PluginRegistry): McpTool[] {
  const notes = {
    builder_id: `Registered builders: ${plugins
      .listBuilders()
      .map((b) => b.id)
      .join(', ')}.`,
    tool_id: `Registered tools: ${plugins
      .listTools()
      .map((t) => t.id)
      .join(', ')}.`,
  };
  return ops
    .filter((op) => !op.restOnly)
    .map((op) => {
      const args = toolArguments(op, notes);
      const rest = `${op.method} ${op.path}`;
      const definition: Tool = {
        name: op.name,
        title: op.summary,
        description: `${op.description}\n\nAnswers {"ok":true,"data":…} with data as REST ${rest} returns it, or {"ok":false,"error":true,"code":…,"detail":{…},"status_code":N}.`,
        inputSchema: args.inputSchema,
        outputSchema: envelopeSchema(op),
        annotations: {
          title: op.summary,
          readOnlyHint: op.hint === 'read',
          destructiveHint: op.hint === 'destructive',
        },
      };
      return { op, args, definition, renames: renamedFields(args.specs) };
    });
}
