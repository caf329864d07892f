import { Type } from '@sinclair/typebox';
import { rowQuery } from '../services/rows.ts';
import { exportLink } from '../services/export-links.ts';
import { EXAMPLE_FILTER_GROUPS, EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';

export const exportProject = defineOperation({
  name: 'export_project',
  summary: 'Link to a CSV export',
  description:
    'A download link to the project’s rows as CSV (the same filter_groups, sort_rules and columns as get_project_rows), valid 15 minutes and needing no API key: give it to a person or a program, or fetch it. The file is streamed, whatever its size; with an API key, GET /projects/{project_id}/export.csv downloads it directly.',
  hint: 'read',
  method: 'POST',
  path: '/projects/{project_id}/exports',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    {
      // Checked by the export itself, so a bad filter answers the same words as on GET rows.
      filter_groups: Type.Optional(Type.Unknown({ description: 'An array of {type: "and"|"or", rules: [...]} groups, as on GET rows.' })),
      sort_rules: Type.Optional(Type.Unknown({ description: 'An array of {col_id, direction, sort_as_number}, as on GET rows.' })),
      columns: Type.Optional(Type.Array(Type.String(), { description: 'Column names or col_ids to export; default: every column.' })),
      bom: Type.Optional(Type.Boolean({ description: 'Start the file with a UTF-8 byte order mark (Excel wants one).' })),
      escape_formulas: Type.Optional(
        Type.Boolean({ description: "Default true: text a spreadsheet would evaluate (=, +, -, @…) starts with ' in the file." }),
      ),
      values: Type.Optional(
        Type.Union([Type.Literal('primary'), Type.Literal('json')], {
          description:
            'primary (default): a tool’s result as its main field (the email of an email finder); json: the whole result as JSON.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  successStatus: 201,
  response: Type.Object({
    url: Type.String({ description: 'GET it for the CSV file; no API key needed.' }),
    expires_at: Type.String({ format: 'date-time' }),
  }),
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { filter_groups: EXAMPLE_FILTER_GROUPS, columns: ['Name', 'Website'] },
    response: {
      url: `https://workflow.example.com/api/enterprise/projects/${EXAMPLE_IDS.project}/export.csv?token=eyJhbGciOiJFUzI1NiIsImtpZCI6Ii4uLiJ9…`,
      expires_at: '2026-11-25T10:15:00.000Z',
    },
  },
  handler: async ({ kernel, project, body, keyId }) => {
    await rowQuery(kernel, project, body); // a bad filter, sort or column is a 422 now, not a broken link later
    return exportLink(kernel, project, body, keyId);
  },
});
