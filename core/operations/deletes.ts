import { Type } from '@sinclair/typebox';
import { runScopeOf, settleBuilderCredits } from '../credits/charges.ts';
import { EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';
import { deleteColumn } from '../services/columns.ts';

export const deleteProject = defineOperation({
  name: 'delete_project',
  summary: 'Delete a project',
  description: 'Deletes a project and its rows. From then on it answers 404. This cannot be undone through the API.',
  hint: 'destructive',
  method: 'DELETE',
  path: '/projects/{project_id}',
  params: ProjectIdParams,
  project: true,
  response: Type.Object({ deleted: Type.Literal(true) }),
  example: { params: { project_id: EXAMPLE_IDS.project }, response: { deleted: true } },
  handler: async ({ kernel, project }) => {
    await kernel.storage.projects.softDelete(project.pk);
    // A build that had not finished gives back what it did not spend (the run itself stops at its next page).
    const builder = project.builderId ? kernel.plugins.builder(project.builderId) : undefined;
    if (builder && ['queued', 'running'].includes(project.builderStatus)) {
      const scope = runScopeOf(project.builderCheckpoint);
      // A scheduled run's rows are those of its checkpoint; the first run's, the project's rows.
      const rows = scope
        ? (project.builderCheckpoint?.rows_created ?? 0)
        : ((await kernel.storage.rows.counts([project.pk])).get(project.pk) ?? 0);
      await settleBuilderCredits(kernel, project.workspaceId, project.id, builder, rows, scope);
    }
    return { deleted: true as const };
  },
});

export const deleteRows = defineOperation({
  name: 'delete_rows',
  summary: 'Delete rows',
  description: 'Deletes rows of a project by id. Ids that are not rows of this project are ignored. This cannot be undone through the API.',
  hint: 'destructive',
  method: 'DELETE',
  path: '/projects/{project_id}/rows',
  params: ProjectIdParams,
  project: true,
  body: Type.Object({ row_ids: Type.Array(Type.String(), { minItems: 1, maxItems: 10_000 }) }, { additionalProperties: false }),
  response: Type.Object({ deleted: Type.Integer({ description: 'Rows deleted.' }) }),
  example: { params: { project_id: EXAMPLE_IDS.project }, body: { row_ids: ['21', '22'] }, response: { deleted: 2 } },
  handler: async ({ kernel, project, body }) => {
    const seqs = [...new Set(body.row_ids.filter((id) => /^[1-9]\d{0,15}$/.test(id)).map(Number))];
    return { deleted: await kernel.storage.rows.softDelete(project.pk, seqs) };
  },
});

export const deleteColumnOp = defineOperation({
  name: 'delete_column',
  summary: 'Delete a column',
  description:
    'Deletes a column of a project, with its values. Work running for it stops on every process (tool calls, sandboxed formulas) and what was queued for it does nothing. A column in the unique key, or read by another column’s config, is a 409 naming what to change first. This cannot be undone through the API.',
  hint: 'destructive',
  method: 'DELETE',
  path: '/projects/{project_id}/columns/{col_id}',
  params: Type.Object({
    project_id: Type.String({ description: 'Project UUID.' }),
    col_id: Type.String({ description: 'The column’s col_id (list_columns).' }),
  }),
  project: true,
  response: Type.Object({ deleted: Type.Literal(true) }),
  errors: {
    409: 'The column is in the project’s unique key, or another column reads it: the detail names them. Nothing changed.',
  },
  example: { params: { project_id: EXAMPLE_IDS.project, col_id: EXAMPLE_IDS.ratingColumn }, response: { deleted: true } },
  handler: async ({ kernel, project, params }) => deleteColumn(kernel, project, params.col_id),
});
