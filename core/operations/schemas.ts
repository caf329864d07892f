import { type Static, Type } from '@sinclair/typebox';

/** Response schemas shared by operations (spec "Resources and their fields"). */

export const ErrorBody = Type.Object({ detail: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())]) });

export const ProjectIdParams = Type.Object({ project_id: Type.String({ description: 'Project UUID.' }) });

export const CellSchema = Type.Object({
  name: Type.String(),
  value: Type.Unknown(),
  status: Type.String({
    description:
      'default (input cells); pending, queued, running, completed, no_result, error, skipped, insufficient_credits (tool cells).',
  }),
  is_loading: Type.Boolean(),
  error: Type.Optional(Type.String()),
});

export const RowSchema = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  company: Type.Record(Type.String(), CellSchema),
});

/** A row in the `values` format (GET rows `format=values`): what an agent reads, without the per-cell repetition. */
export const ValuesRowSchema = Type.Object({
  id: Type.String(),
  values: Type.Record(Type.String(), Type.Unknown(), { description: 'Column name → value.' }),
  status: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Column name → status, for tool cells not completed (pending, queued, running, error…).',
    }),
  ),
  errors: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Column name → error message of the cells in error.' })),
});

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
    waterfall: Type.Optional(Type.Array(WaterfallStepSchema, { description: 'Set on waterfall columns: the tools tried in order.' })),
    max_credits_per_row: Type.Optional(
      Type.Integer({ description: 'Set when the column caps what one row may spend across its waterfall steps.' }),
    ),
  },
  { description: 'A tool column: filled by the service.' },
);

/** A column as the API shows it: `type` tells an input column from a tool column. */
export const ColumnSchema = Type.Union([InputColumnSchema, ToolColumnSchema]);
export type ColumnView = Static<typeof ColumnSchema>;

export const BuilderStatusSchema = Type.Object({
  type: Type.Union(['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
  error_message: Type.Union([Type.String(), Type.Null()]),
  progress: Type.Optional(Type.Object({ rows_created: Type.Integer(), target: Type.Integer() })),
  warning: Type.Optional(
    Type.String({
      description:
        'Set when the run completed but stopped at a row limit (the builder’s max_rows or the plan’s rows per project) while its source had more rows; the rows written are kept.',
    }),
  ),
});

/** One step of a builder run, as `lead_gen_execution_log` lists it. */
export const ExecutionLogEntrySchema = Type.Object({
  at: Type.String({ format: 'date-time' }),
  step: Type.Union(
    ['queued', 'started', 'resumed', 'page', 'retry', 'warning', 'completed', 'failed'].map((s) => Type.Literal(s)),
    {
      description: 'warning: the run stopped at a row limit while its source had more rows.',
    },
  ),
  message: Type.String(),
  attempt: Type.Optional(Type.Integer()),
  page: Type.Optional(Type.Integer()),
  rows: Type.Optional(Type.Integer({ description: 'Rows written by this page.' })),
  total_rows: Type.Optional(Type.Integer({ description: 'Rows written so far.' })),
  error: Type.Optional(Type.String()),
});

export const ProjectSummarySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  creator_id: Type.String(),
  company_count: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const ProjectDetailsSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  builder_id: Type.Union([Type.String(), Type.Null()]),
  columns: Type.Array(ColumnSchema),
  first_company_data: Type.Record(Type.String(), Type.Unknown()),
  row_count: Type.Integer(),
  builder_status: BuilderStatusSchema,
  lead_gen_execution_log: Type.Optional(
    Type.Array(ExecutionLogEntrySchema, { description: 'Each step of the builder run (projects made by a builder).' }),
  ),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
