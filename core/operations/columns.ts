import { Type } from '@sinclair/typebox';
import { columnView } from '../columns/column-view.ts';
import { columnProgress } from '../services/column-progress.ts';
import { updateColumn } from '../services/column-updates.ts';
import { createColumn, runColumns } from '../services/columns.ts';
import { estimateColumns } from '../services/estimates.ts';
import { EXAMPLE_COLUMNS, EXAMPLE_IDS, EXAMPLE_TOOL_COLUMN, EXAMPLE_PLUGINS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ColumnSchema, EstimateSchema, ProjectIdParams, WaterfallStepSchema } from './schemas.ts';

export const listColumns = defineOperation({
  name: 'list_columns',
  summary: 'List columns',
  description:
    'The columns of a project: input columns (filled by you or the builder) and tool columns (filled by the service), with their col_id.',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/columns',
  params: ProjectIdParams,
  project: true,
  response: Type.Array(ColumnSchema),
  example: { params: { project_id: EXAMPLE_IDS.project }, response: EXAMPLE_COLUMNS },
  handler: async ({ kernel, project }) => (await kernel.storage.projects.columns(project)).map((c) => columnView(c, kernel.plugins)),
});

export const createColumnOp = defineOperation({
  name: 'create_column',
  summary: 'Add a tool column',
  description:
    'Adds an enrichment (tool) column. config is validated against the tool’s config_schema and may reference other columns as {{Column Name}}. Existing rows get pending cells: start them with run_pending_columns. With auto_run, rows added later are enriched automatically. A waterfall tries several tools in order until one finds a valid value. run_condition is a JSONata expression over the row (column names as fields); rows where it is false are skipped.',
  hint: 'write',
  method: 'POST',
  path: '/projects/{project_id}/columns',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255, description: 'Column name, unique in the project.' }),
      tool_id: Type.Optional(Type.String({ description: 'The tool that fills the column (GET /tools).' })),
      config: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), { description: 'Tool config; {{Column Name}} inserts a row value.' }),
      ),
      auto_run: Type.Optional(Type.Boolean({ default: false, description: 'Enrich rows added later automatically.' })),
      run_condition: Type.Optional(
        Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 'JSONata over the row; false skips the cell.' }),
      ),
      waterfall: Type.Optional(
        Type.Array(WaterfallStepSchema, { minItems: 1, maxItems: 10, description: 'Tools to try in order; the first valid result wins.' }),
      ),
      max_credits_per_row: Type.Optional(
        Type.Integer({ minimum: 0, description: 'A waterfall stops before a step that would take one row past this many credits.' }),
      ),
      order: Type.Optional(
        Type.Union([Type.Literal('listed'), Type.Literal('auto')], {
          default: 'listed',
          description:
            'listed: the waterfall tries its steps in the order given. auto: cheapest credits per result found in this workspace first (GET /tools/{tool_id}/stats), trying a step whose figures are thin or stale first now and then.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  successStatus: 201,
  response: ColumnSchema,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: {
      name: 'Domain',
      tool_id: EXAMPLE_PLUGINS.tool,
      config: { value: '{{Website}}' },
      auto_run: true,
      run_condition: 'Website != null',
    },
    response: EXAMPLE_TOOL_COLUMN,
  },
  handler: ({ kernel, project, body }) => createColumn(kernel, project, body),
});

export const updateColumnOp = defineOperation({
  name: 'update_column',
  summary: 'Change a column',
  description:
    'Renames a column, or changes a tool column’s config (validated as create_column validates it; of the first step of a waterfall), auto_run or run_condition; give at least one. A rename keeps every value, the unique key and saved filters; other columns’ {{Old Name}} templates are rewritten to the new name. Cells already filled are not run again: re-run them with run_pending_columns (mode all).',
  hint: 'write',
  method: 'PATCH',
  path: '/projects/{project_id}/columns/{col_id}',
  params: Type.Object({
    project_id: Type.String({ description: 'Project UUID.' }),
    col_id: Type.String({ description: 'The column’s col_id (list_columns).' }),
  }),
  project: true,
  body: Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'New name, unique in the project.' })),
      config: Type.Optional(
        Type.Record(Type.String(), Type.Unknown(), {
          description: 'Tool columns: the tool config (the first step’s, for a waterfall); {{Column Name}} inserts a row value.',
        }),
      ),
      auto_run: Type.Optional(Type.Boolean({ description: 'Tool columns: enrich rows added later automatically.' })),
      run_condition: Type.Optional(
        Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
          description: 'Tool columns: JSONata over the row; false skips the cell. null removes it.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: ColumnSchema,
  errors: {
    404: 'No such column in this project.',
    409: 'Another column has that name, or another column’s run_condition or expression reads the old name as a field (detail.read_by names them: edit them first). Nothing changed.',
    422: 'Nothing to change, an invalid config or run_condition, or tool settings on an input column. Nothing changed.',
  },
  example: {
    params: { project_id: EXAMPLE_IDS.project, col_id: EXAMPLE_IDS.domainColumn },
    body: { name: 'Company domain' },
    response: { ...EXAMPLE_TOOL_COLUMN, name: 'Company domain' },
  },
  handler: ({ kernel, project, params, body }) => updateColumn(kernel, project, params.col_id, body),
});

/** Which cells a run covers: shared by the run and its estimate. */
const RunSelectionFields = {
  col_ids: Type.Optional(Type.Array(Type.String(), { description: 'Tool column ids; default: every tool column.' })),
  include_errors: Type.Optional(Type.Boolean({ default: false, description: 'Also re-run cells that ended in error.' })),
  mode: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('failed'), Type.Literal('empty'), Type.Literal('all')], {
      default: 'pending',
      description:
        'Which cells to run: pending (never run, or stopped for lack of credits), failed (ended in error), empty (every cell without a value), all (completed ones too; cached results cost nothing).',
    }),
  ),
  row_ids: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 1000,
      description: 'Run only these rows (at most 1,000); another id is a 404 and nothing runs.',
    }),
  ),
};

export const runPendingColumns = defineOperation({
  name: 'run_pending_columns',
  summary: 'Run tool columns',
  description:
    'Queues the cells of the given tool columns (default: every tool column) that `mode` names — pending by default (never run, or stopped for lack of credits); failed, empty or all to re-run — in every row or only in `row_ids`. Cells fill in the background: wait for them with wait_for_project (or wait_seconds on MCP), then read get_project_rows. Costs credits per enriched cell: estimate_columns tells how many first, and max_credits caps the run.',
  hint: 'write',
  method: 'POST',
  path: '/projects/{project_id}/columns/run',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    {
      ...RunSelectionFields,
      max_credits: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            'Stop charging once this run has spent this many credits (refunds give credits back to it); the cells left stay pending. Above 0.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: Type.Object({
    queued: Type.Integer({ description: 'Cells queued.' }),
    max_credits: Type.Optional(Type.Integer({ description: 'The run’s cap, when it set one.' })),
  }),
  example: { params: { project_id: EXAMPLE_IDS.project }, body: { col_ids: [EXAMPLE_IDS.domainColumn] }, response: { queued: 20 } },
  waitable: 'columns',
  spends: true,
  handler: ({ kernel, project, body, keyId }) => runColumns(kernel, project, body, keyId),
});

export const estimateColumnsOp = defineOperation({
  name: 'estimate_columns',
  summary: 'Estimate a column run',
  description:
    'What run_pending_columns with the same col_ids, mode and row_ids would cost, without running anything: cells it would queue, credits_max (every step charged), credits_expected (from each tool’s hit rate in this workspace), balance and balance_after (balance − expected). Run conditions and cached results count as free, as in the run.',
  hint: 'read',
  method: 'POST',
  path: '/projects/{project_id}/columns/estimate',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(RunSelectionFields, { additionalProperties: false }),
  response: EstimateSchema,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { col_ids: [EXAMPLE_IDS.domainColumn], mode: 'pending' },
    response: { cells: 120, credits_max: 120, credits_expected: 74.4, balance: 1000, balance_after: 925.6 },
  },
  handler: ({ kernel, project, body }) => estimateColumns(kernel, project, body),
});

const cellsWith = (what: string) => Type.Integer({ minimum: 0, description: `Cells ${what}.` });

export const getColumnProgress = defineOperation({
  name: 'get_column_progress',
  summary: 'Progress of tool columns',
  description:
    'How far each tool column has come: over the live rows, its cells by status (pending, queued, running, completed, no_result, error, skipped, insufficient_credits), `failed` (= error, the cells mode "failed" re-runs) and `total`. Counted from the cells themselves; asked again while nothing changed, answered from memory.',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/columns/progress',
  params: ProjectIdParams,
  project: true,
  response: Type.Object({
    columns: Type.Array(
      Type.Object({
        col_id: Type.String(),
        total: cellsWith('in the column (one per live row)'),
        pending: cellsWith('never run, or stopped for lack of credits by a run cap'),
        queued: cellsWith('waiting for a worker'),
        running: cellsWith('being enriched now'),
        completed: cellsWith('with a value'),
        no_result: cellsWith('whose tools found nothing'),
        error: cellsWith('ended in error'),
        failed: cellsWith('ended in error (the same as error: what mode "failed" re-runs)'),
        skipped: cellsWith('skipped (run condition false, or an input missing)'),
        insufficient_credits: cellsWith('stopped for lack of credits'),
      }),
      { description: 'Every tool column, in the project’s order.' },
    ),
  }),
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    response: {
      columns: [
        {
          col_id: EXAMPLE_IDS.domainColumn,
          total: 20,
          pending: 0,
          queued: 2,
          running: 3,
          completed: 12,
          no_result: 1,
          error: 1,
          failed: 1,
          skipped: 1,
          insufficient_credits: 0,
        },
      ],
    },
  },
  handler: ({ kernel, project }) => columnProgress(kernel, project),
});
