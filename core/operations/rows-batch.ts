import { Type } from '@sinclair/typebox';
import { checkRowQuota } from '../services/quotas.ts';
import { insertRows, MAX_BATCH_ROWS } from '../services/row-insert.ts';
import { cellsOfEach } from '../services/rows.ts';
import { EXAMPLE_COMPANY, EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';

export const addRowsOp = defineOperation({
  name: 'add_rows',
  summary: 'Add several rows',
  description: `Adds up to ${MAX_BATCH_ROWS} rows at once, all or none. Each item maps every input column name to its value, as in add_row; tool columns are filled by the service (auto-run columns in the background). A bad item rejects the whole batch and names its index.`,
  hint: 'write',
  method: 'POST',
  path: '/projects/{project_id}/rows/batch',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    {
      rows: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
        minItems: 1,
        maxItems: MAX_BATCH_ROWS,
        description: 'Company maps: column name → value, for every input column.',
      }),
    },
    { additionalProperties: false },
  ),
  invalidStatus: 403,
  successStatus: 201,
  response: Type.Object({
    row_ids: Type.Array(Type.String(), { description: 'In the order given; a row whose unique key exists answers the existing row.' }),
    created: Type.Integer(),
    existing: Type.Optional(Type.Integer({ description: 'Rows not added: their unique key names an existing row (or an earlier item).' })),
    updated: Type.Optional(Type.Integer({ description: 'Existing rows whose empty cells were filled (on_conflict "update").' })),
  }),
  errors: {
    403: 'An item misses input columns (detail.missing_columns), names unknown/tool columns, or holds a value over MAX_CELL_BYTES or a row over MAX_ROW_BYTES (detail.message, detail.column); detail.row_index says which; or the rows would pass the plan’s rows per project (detail.code quota_exceeded).',
  },
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: {
      rows: [
        EXAMPLE_COMPANY,
        { ...EXAMPLE_COMPANY, Name: 'Centre Dentaire Part-Dieu', Address: '17 Rue de la Villette, 69003 Lyon', Reviews: 54 },
      ],
    },
    response: { row_ids: ['21', '22'], created: 2 },
  },
  spends: true,
  handler: async ({ kernel, workspace, project, body, keyId }) => {
    const columns = await kernel.storage.projects.columns(project);
    // Check every item before writing anything, so a bad item leaves the project untouched.
    const cells = cellsOfEach(columns, body.rows, (i) => `rows[${i}]: `);
    await checkRowQuota(kernel, workspace, project.pk, cells.length);
    const out = await insertRows(kernel, project, columns, cells, { keyId });
    const created = out.created.filter(Boolean).length;
    return {
      row_ids: out.seqs.map(String),
      created,
      ...(created < cells.length ? { existing: cells.length - created, updated: out.updated } : {}),
    };
  },
});
