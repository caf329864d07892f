import { Type } from '@sinclair/typebox';
import { updateRow } from '../services/row-edits.ts';
import { addRow, getRow, listRows, ROW_EXISTS } from '../services/rows.ts';
import { EXAMPLE_COMPANY, EXAMPLE_FILTER_GROUPS, EXAMPLE_IDS, EXAMPLE_ROW, EXAMPLE_SORT_RULES } from './examples.ts';
import { JsonQueryParam } from './json-query.ts';
import { defineOperation } from './operation.ts';
import { IncludeMetaQuery, ProjectIdParams, RowSchema, ValuesRowSchema, wantsMeta } from './schemas.ts';

export const addRowOp = defineOperation({
  name: 'add_row',
  summary: 'Add a row',
  description:
    'Adds one row. `company` maps every input column name to its value; tool columns are filled by the service in the background.',
  hint: 'write',
  method: 'POST',
  path: '/projects/{project_id}/rows',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    { company: Type.Record(Type.String(), Type.Unknown(), { description: 'Column name → value, for every input column.' }) },
    { additionalProperties: false },
  ),
  invalidStatus: 403,
  successStatus: 201,
  otherSuccess: {
    status: 200,
    description:
      'The project’s unique key names an existing row: row_id is that row, message "Row already exists" (with on_conflict "update", its empty cells were filled). Nothing was added.',
    when: (d) => d.message.startsWith(ROW_EXISTS),
    example: { row_id: '21', message: ROW_EXISTS, error_detail: null },
  },
  response: Type.Object({ row_id: Type.String(), message: Type.String(), error_detail: Type.Null() }),
  errors: {
    403: 'Missing required input columns (detail.missing_columns) or invalid payload (detail.message): unknown or tool columns, a value over MAX_CELL_BYTES or a row over MAX_ROW_BYTES (detail.column names it).',
  },
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { company: EXAMPLE_COMPANY },
    response: { row_id: '21', message: 'Row created', error_detail: null },
  },
  spends: true,
  handler: ({ kernel, workspace, project, body, keyId }) => addRow(kernel, workspace, project, body.company, keyId),
});

export const listRowsOp = defineOperation({
  name: 'get_project_rows',
  summary: 'List rows',
  description:
    'Pages through a project’s rows, including enriched tool cells. filter_groups and sort_rules are URL-encoded JSON (see the docs for the rule shape and the 14 operators).',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/rows',
  params: ProjectIdParams,
  project: true,
  query: Type.Object({
    page: Type.Integer({ minimum: 1, default: 1, description: '1-based page number.' }),
    page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Rows per page, 1 to 100.' }),
    // JSON carried in a string: URL-encoded on REST, filter_groups_json / sort_rules_json on MCP; the handler gets it parsed.
    filter_groups: Type.Optional(JsonQueryParam({ description: 'JSON array of {type: "and"|"or", rules: [...]} groups.' })),
    sort_rules: Type.Optional(JsonQueryParam({ description: 'JSON array of {col_id, direction, sort_as_number}.' })),
    columns: Type.Optional(
      JsonQueryParam({ description: 'JSON array of the column names (or col_ids) to return; default: every column.' }),
    ),
    format: Type.Optional(
      Type.Union([Type.Literal('cells'), Type.Literal('values')], {
        default: 'cells',
        description:
          'cells (default): each cell with its name, value, status and is_loading. values: one {column: value} map per row, plus `status` only for cells not completed (and `errors`): about a third of the size.',
      }),
    ),
    ...IncludeMetaQuery,
  }),
  response: Type.Object({
    rows: Type.Array(Type.Union([RowSchema, ValuesRowSchema])),
    page: Type.Integer(),
    page_size: Type.Integer(),
    total_rows: Type.Integer(),
    total_pages: Type.Integer(),
  }),
  errors: { 422: 'Bad filter_groups or sort_rules: invalid JSON, invalid shape, unknown column or operator.' },
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    query: { page: 1, page_size: 1, filter_groups: EXAMPLE_FILTER_GROUPS, sort_rules: EXAMPLE_SORT_RULES },
    response: { rows: [EXAMPLE_ROW], page: 1, page_size: 1, total_rows: 3, total_pages: 3 },
  },
  handler: ({ kernel, project, query }) => listRows(kernel, project, { ...query, meta: wantsMeta(query) }),
});

export const searchRowsOp = defineOperation({
  name: 'search_project_rows',
  summary: 'List rows (filters in the body)',
  description:
    'The same listing as GET rows, for filters too long for a URL: page, page_size, filter_groups and sort_rules in a JSON body, the filters as arrays (not JSON strings). Answers exactly what GET rows answers; reads only.',
  hint: 'read',
  method: 'POST',
  path: '/projects/{project_id}/rows/search',
  params: ProjectIdParams,
  project: true,
  restOnly: true,
  body: Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
      page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
      // Checked by the listing itself, so a bad filter answers the same words as on GET rows.
      filter_groups: Type.Optional(Type.Unknown({ description: 'An array of {type: "and"|"or", rules: [...]} groups, as on GET rows.' })),
      sort_rules: Type.Optional(Type.Unknown({ description: 'An array of {col_id, direction, sort_as_number}, as on GET rows.' })),
      ...IncludeMetaQuery,
    },
    { additionalProperties: false },
  ),
  response: listRowsOp.response,
  errors: listRowsOp.errors,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { page: 1, page_size: 1, filter_groups: EXAMPLE_FILTER_GROUPS, sort_rules: EXAMPLE_SORT_RULES },
    response: { rows: [EXAMPLE_ROW], page: 1, page_size: 1, total_rows: 3, total_pages: 3 },
  },
  handler: ({ kernel, project, body }) =>
    listRows(kernel, project, {
      page: body.page ?? 1,
      page_size: body.page_size ?? 50,
      filter_groups: body.filter_groups,
      sort_rules: body.sort_rules,
      meta: wantsMeta(body),
    }),
});

export const getRowOp = defineOperation({
  name: 'get_row',
  summary: 'One row',
  description: 'One row of a project, with every cell.',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/rows/{row_id}',
  params: Type.Object({
    project_id: Type.String({ description: 'Project UUID.' }),
    row_id: Type.String({ description: 'Row id, as GET rows lists it (id).' }),
  }),
  query: Type.Object(IncludeMetaQuery),
  project: true,
  response: RowSchema,
  example: { params: { project_id: EXAMPLE_IDS.project, row_id: '1' }, response: EXAMPLE_ROW },
  handler: ({ kernel, project, params, query }) => getRow(kernel, project, params.row_id, { meta: wantsMeta(query) }),
});

export const updateRowOp = defineOperation({
  name: 'update_row',
  summary: 'Change a row',
  description:
    'Sets input cells of one row: `cells` maps input column names (or col_ids) to their new values (null empties a cell). Tool cells are filled by their tool: re-run them instead (run_pending_columns with mode "all" and row_ids); tool cells that read the edited values are not re-run on their own. A value giving the row a unique key another row holds is a 409. Answers the row, as get_row does.',
  hint: 'write',
  method: 'PATCH',
  path: '/projects/{project_id}/rows/{row_id}',
  params: getRowOp.params,
  project: true,
  body: Type.Object(
    {
      cells: Type.Record(Type.String(), Type.Unknown(), {
        description: 'Input column name (or col_id) → its new value; the other cells stay.',
      }),
    },
    { additionalProperties: false },
  ),
  response: RowSchema,
  errors: {
    404: 'No such row in this project (or it was deleted).',
    409: 'The new values give the row the unique key (project settings unique_columns) of another row: detail.row_id names it. Nothing was written.',
    422: 'cells names no column, a tool column or an unknown column, or a value over MAX_CELL_BYTES / a row over MAX_ROW_BYTES. Nothing was written.',
  },
  example: {
    params: { project_id: EXAMPLE_IDS.project, row_id: '1' },
    body: { cells: { Phone: '+33 4 78 00 00 01' } },
    response: {
      ...EXAMPLE_ROW,
      company: { ...EXAMPLE_ROW.company, Phone: { name: 'Phone', value: '+33 4 78 00 00 01', status: 'default', is_loading: false } },
    },
  },
  handler: ({ kernel, project, params, body }) => updateRow(kernel, project, params.row_id, body.cells),
});
