import { Type } from '@sinclair/typebox';
import { ColumnSchema } from '../columns/column-view.ts';
import { CELL_STATUSES } from '../model.ts';

export { ColumnSchema };

/** Response schemas shared by operations (spec "Resources and their fields"). */

export const ErrorBody = Type.Object({ detail: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())]) });

export const ProjectIdParams = Type.Object({ project_id: Type.String({ description: 'Project UUID.' }) });

/**
 * Asking for each tool cell's provenance: `include=meta` on REST, `include_meta` on MCP
 * (docs/enrichment.md); `include` is marked REST-only (an MCP argument of one value says less than a boolean).
 */
export const IncludeMetaQuery = {
  include: Type.Optional(
    Type.Literal('meta', {
      description: 'meta: add each tool cell’s provenance (tool, provider, fetched_at, credits, cached).',
      'x-rest-only': true,
    }),
  ),
  include_meta: Type.Optional(
    Type.Boolean({ description: 'Add each tool cell’s provenance: tool_id, provider, fetched_at, credits, cached (REST: include=meta).' }),
  ),
};

/** Whether a read asked for provenance, by either name. */
export const wantsMeta = (q: { include?: string; include_meta?: boolean }): boolean => q.include === 'meta' || q.include_meta === true;

/** Where a tool cell's value came from (docs/enrichment.md). */
export const CellMetaSchema = Type.Object({
  tool_id: Type.String({ description: 'The tool that last ran on the cell (for a completed cell, the step that found the value).' }),
  provider: Type.String(),
  fetched_at: Type.String({ format: 'date-time', description: 'When the value was found (for a cached one: first found).' }),
  credits: Type.Integer({ description: 'What the cell cost, net of refunds, over every step tried.' }),
  cached: Type.Boolean({ description: 'Reused from the workspace’s result cache (free).' }),
});

export const CellSchema = Type.Object({
  name: Type.String(),
  value: Type.Unknown(),
  // An enum in the documents (OpenAPI, MCP), a string to the code that writes cells.
  status: Type.String({
    enum: [...CELL_STATUSES],
    description:
      'default (input cells); pending, queued, running, completed, no_result, error, skipped, insufficient_credits (tool cells).',
  }),
  is_loading: Type.Boolean(),
  error: Type.Optional(Type.String()),
  meta: Type.Optional(Type.Union([CellMetaSchema, Type.Null()], { description: 'With include=meta, on tool cells (null: never run).' })),
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
  meta: Type.Optional(Type.Record(Type.String(), CellMetaSchema, { description: 'With include=meta: column name → provenance.' })),
});

export { type ColumnView, WaterfallStepSchema } from '../columns/column-view.ts';

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
    ['queued', 'scheduled', 'skipped', 'started', 'resumed', 'page', 'retry', 'warning', 'completed', 'failed', 'cancelled'].map((s) =>
      Type.Literal(s),
    ),
    {
      description:
        'warning: the run stopped at a row limit while its source had more rows; scheduled: the project’s schedule started a run; skipped: a due time started none (the entry says why).',
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

/** How rows come into a project (docs/enrichment.md, unique keys). */
export const ProjectSettingsSchema = Type.Object({
  unique_columns: Type.Array(Type.String(), {
    description:
      'Input columns whose values, normalised (case, blanks; web addresses to their host; emails lower-cased), identify a row; empty: rows are never compared.',
  }),
  on_conflict: Type.Union([Type.Literal('skip'), Type.Literal('update')], {
    description: 'A row whose key exists: skip it (the existing row answers), or update the existing row’s empty input cells.',
  }),
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
  settings: ProjectSettingsSchema,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

/** What a run would cost (docs/enrichment.md), answered by the estimate operations. */
export const EstimateSchema = Type.Object({
  cells: Type.Integer({ description: 'Cells the run would queue (rows, for a builder).' }),
  credits_max: Type.Integer({ description: 'The most it may charge: every step that may be charged is.' }),
  credits_expected: Type.Number({ description: 'What it is expected to charge, from the tools’ hit rates in this workspace.' }),
  balance: Type.Integer({ description: 'The workspace’s balance now.' }),
  balance_after: Type.Number({ description: 'balance − credits_expected.' }),
});
