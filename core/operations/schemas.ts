import { Type } from '@sinclair/typebox';

/** Response schemas shared by operations (spec "Resources and their fields"). */

export const ErrorBody = Type.Object({ detail: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())]) });

export const ProjectIdParams = Type.Object({ project_id: Type.String({ description: 'Project UUID.' }) });

export const CellSchema = Type.Object({
  name: Type.String(),
  value: Type.Unknown(),
  status: Type.String({ description: 'default (input cells); pending, queued, running, completed, no_result, error, skipped, insufficient_credits (tool cells).' }),
  is_loading: Type.Boolean(),
  error: Type.Optional(Type.String()),
});

export const RowSchema = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  company: Type.Record(Type.String(), CellSchema),
});

export const ColumnSchema = Type.Object({
  col_id: Type.String(),
  name: Type.String(),
  required: Type.Boolean(),
  type: Type.Union([Type.Literal('input'), Type.Literal('tool')]),
  tool_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  config: Type.Optional(Type.Unknown()),
});

export const BuilderStatusSchema = Type.Object({
  type: Type.Union(['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
  error_message: Type.Union([Type.String(), Type.Null()]),
  progress: Type.Optional(Type.Object({ rows_created: Type.Integer(), target: Type.Integer() })),
  warning: Type.Optional(
    Type.String({ description: 'Set when the run completed but stopped at a row limit (the builder’s max_rows or the plan’s rows per project) while its source had more rows; the rows written are kept.' }),
  ),
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
  lead_gen_execution_log: Type.Optional(Type.Unknown()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
