import { Type } from '@sinclair/typebox';
import { MAX_UNIQUE_COLUMNS, updateSettings } from '../services/project-settings.ts';
import { EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams, ProjectSettingsSchema } from './schemas.ts';

export const updateProjectSettings = defineOperation({
  name: 'update_project_settings',
  summary: 'Set unique columns',
  description: `Sets the project's unique_columns (up to ${MAX_UNIQUE_COLUMNS} input column names whose values, normalised, identify a row: ACME.com and https://www.acme.com/ are one) and on_conflict (skip: an insert of an existing key answers the existing row; update: it also fills that row's empty input cells). Applies to add_row, add_rows, builder runs and inbound rows. Existing rows are keyed at once; rows that already repeat a key are a 409 naming them. unique_columns [] removes the key.`,
  hint: 'write',
  method: 'PUT',
  path: '/projects/{project_id}/settings',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    {
      unique_columns: Type.Optional(
        Type.Array(Type.String(), { maxItems: 20, description: ProjectSettingsSchema.properties.unique_columns.description }),
      ),
      on_conflict: Type.Optional(ProjectSettingsSchema.properties.on_conflict),
    },
    { additionalProperties: false },
  ),
  response: ProjectSettingsSchema,
  errors: {
    409: 'Rows of the project already repeat the new key: detail.duplicates counts them, detail.examples names pairs of row_ids. Nothing changed.',
  },
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { unique_columns: ['Website'], on_conflict: 'skip' },
    response: { unique_columns: ['Website'], on_conflict: 'skip' },
  },
  handler: ({ kernel, project, body }) => updateSettings(kernel, project, body),
});
