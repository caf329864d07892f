import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { WaitStateSchema } from '../../core/operations/projects.ts';
import type { PluginRegistry } from '../../core/plugins/registry.ts';
import { renamedFields } from './argument-names.ts';
import { type JsonSchema, type ToolArguments, toolArguments } from './tool-arguments.ts';
import { TABLE_APP_URI } from './resources.ts';

/** Tools whose result names a project: hosts that render MCP Apps show the project table beside them. */
const SHOWS_TABLE = new Set(['get_project', 'get_project_rows', 'run_builder', 'run_pending_columns']);

/** An operation of the table as an MCP tool: its listing and how its arguments map back. */
export interface McpTool {
  op: AnyOperation;
  args: ToolArguments;
  definition: Tool;
  /** REST field → argument, for validation errors told in the tool's terms. */
  renames: Map<string, string>;
}

/** Words in a schema that say what a value means or show one; structure (types, required…) stays. */
const PROSE = new Set(['description', 'examples', 'example', 'title', 'default']);

type Schema = Record<string, unknown>;

const isConst = (s: unknown): s is { const: unknown; type?: string } =>
  typeof s === 'object' && s !== null && 'const' in s && Object.keys(s).every((k) => k === 'const' || k === 'type');
const isBareType = (s: unknown): s is { type: string } =>
  typeof s === 'object' && s !== null && Object.keys(s).length === 1 && typeof (s as Schema).type === 'string';

/**
 * A schema without its prose, in its shortest equivalent form: `anyOf` of constants becomes an
 * `enum`, `anyOf` of bare types a list of types, a free-form record's catch-all pattern goes. The
 * output schemas are for validating results; what the fields mean is in the tool's description and
 * the API docs, and repeating it in every listing would double tools/list (docs/mcp.md).
 */
function structureOnly(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structureOnly);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (PROSE.has(k)) continue;
    // `properties` maps field names, which may be called "description" or "title": those stay.
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as object).map(([f, p]) => [f, structureOnly(p)]));
    else if (k === 'patternProperties' && JSON.stringify(v) === '{"^(.*)$":{}}') continue;
    else out[k] = structureOnly(v);
  }
  const options = out.anyOf;
  if (Array.isArray(options) && Object.keys(out).length === 1) {
    const types = new Set(options.map((o) => (o as Schema).type));
    if (options.every(isConst) && types.size === 1) {
      const [type] = types;
      return { ...(type ? { type } : {}), enum: options.map((o) => o.const) };
    }
    if (options.every(isBareType)) return { type: options.map((o) => o.type) };
  }
  return out;
}

/** What wait_seconds adds to an envelope (core/services/project-work.ts). */
const WAIT_SCHEMA = structureOnly(JSON.parse(JSON.stringify(WaitStateSchema))) as JsonSchema;

/** The envelope as JSON Schema, `data` being the operation's REST response schema (structure only). */
function envelopeSchema(op: AnyOperation): Tool['outputSchema'] {
  return {
    type: 'object',
    properties: {
      ok: { type: 'boolean' },
      data: structureOnly(JSON.parse(JSON.stringify(op.response))) as JsonSchema,
      ...(op.waitable ? { wait: WAIT_SCHEMA } : {}),
      ...(op.name === 'get_project_rows' ? { truncated: { type: 'string' } } : {}),
    },
    // Error envelopes (error, code, detail, status_code) fit too: only `ok` is required and other
    // fields are allowed; the server's instructions describe them once.
    required: ['ok'],
  };
}

/**
 * Generates one MCP tool per operation (docs/architecture.md: the REST routes and the tools come from the
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
        // The envelope every tool answers is told once, in the server's instructions.
        description: `${op.description} (REST: ${rest})`,
        inputSchema: args.inputSchema,
        outputSchema: envelopeSchema(op),
        annotations: {
          readOnlyHint: op.hint === 'read',
          destructiveHint: op.hint === 'destructive',
        },
        // Hosts that render MCP Apps show the project table beside these results.
        ...(SHOWS_TABLE.has(op.name) ? { _meta: { ui: { resourceUri: TABLE_APP_URI } } } : {}),
      };
      return { op, args, definition, renames: renamedFields(args.specs) };
    });
}
