import { type Static, Type } from '@sinclair/typebox';
import type { Column } from '../model.ts';
import type { AnyTool } from '../plugins/plugin-types.ts';

/** A column as REST and MCP show it: the schema every door describes, and the view of a stored column. */

/** One step of a waterfall column: a tool and its config. */
export const WaterfallStepSchema = Type.Object(
  {
    tool_id: Type.String({ description: 'A tool id (GET /tools).' }),
    config: Type.Record(Type.String(), Type.Unknown(), { description: 'The tool config; {{Column Name}} inserts a row value.' }),
  },
  { additionalProperties: false },
);

const InputColumnSchema = Type.Object(
  {
    col_id: Type.String(),
    name: Type.String(),
    required: Type.Literal(true),
    type: Type.Literal('input'),
  },
  { description: 'An input column: filled by the builder or by you.' },
);

const ToolColumnSchema = Type.Object(
  {
    col_id: Type.String(),
    name: Type.String(),
    required: Type.Literal(false),
    type: Type.Literal('tool'),
    tool_id: Type.Union([Type.String(), Type.Null()], { description: 'The tool that fills the column (the first step of a waterfall).' }),
    config: Type.Unknown({ description: 'The tool config (of the first step of a waterfall).' }),
    auto_run: Type.Boolean({ description: 'Rows added later are enriched as they arrive.' }),
    run_condition: Type.Union([Type.String(), Type.Null()], { description: 'JSONata over the row; false skips the cell.' }),
    primary_field: Type.Union([Type.String(), Type.Null()], {
      description:
        'The field of its values that stands for them (a CSV export writes it; a console shows it): the first field its tool produces, for a waterfall the first one every step produces; null when the tool is unknown.',
    }),
    waterfall: Type.Optional(Type.Array(WaterfallStepSchema, { description: 'Set on waterfall columns: the tools tried in order.' })),
    max_credits_per_row: Type.Optional(
      Type.Integer({ description: 'Set when the column caps what one row may spend across its waterfall steps.' }),
    ),
    order: Type.Optional(
      Type.Literal('auto', { description: 'Set when the waterfall tries its steps by best credits per result found so far.' }),
    ),
  },
  { description: 'A tool column: filled by the service.' },
);

/** A column as the API shows it: `type` tells an input column from a tool column. */
export const ColumnSchema = Type.Union([InputColumnSchema, ToolColumnSchema]);
export type ColumnView = Static<typeof ColumnSchema>;

/** Finds a tool by id: the plugin registry, as the kernel holds it. */
export interface ToolLookup {
  tool(id: string): AnyTool | undefined;
}

/**
 * The field a tool column's values are read by: the first field its tool produces (for a waterfall,
 * the first one every step produces). Input columns have none.
 */
export function primaryField(tools: ToolLookup, column: Column): string | null {
  if (column.type !== 'tool') return null;
  const fields = (column.waterfall?.length ? column.waterfall.map((s) => s.tool_id) : [column.toolId]).map((id) =>
    id ? (tools.tool(id)?.produces.map((p) => p.field) ?? []) : [],
  );
  const [first = [], ...others] = fields;
  return first.find((f) => others.every((set) => set.includes(f))) ?? first[0] ?? null;
}

/** A column as REST and MCP show it (`tools`: to name a tool column's primary field). */
export function columnView(c: Column, tools: ToolLookup): ColumnView {
  if (c.type === 'input') return { col_id: c.id, name: c.name, required: true, type: 'input' };
  return {
    col_id: c.id,
    name: c.name,
    required: false,
    type: 'tool',
    tool_id: c.toolId,
    config: c.config,
    auto_run: c.autoRun,
    run_condition: c.runCondition,
    primary_field: primaryField(tools, c),
    ...(c.waterfall ? { waterfall: c.waterfall } : {}),
    ...(c.maxCreditsPerRow !== null ? { max_credits_per_row: c.maxCreditsPerRow } : {}),
    ...(c.stepOrder === 'auto' ? { order: 'auto' as const } : {}),
  };
}
