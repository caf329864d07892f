import { Type } from '@sinclair/typebox';
import { checkFilterGroups } from '../rows/filter-parse.ts';
import { FilterGroups } from '../rows/filter-schema.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';

const FiltersBody = Type.Object({ filter_groups: FilterGroups }, { additionalProperties: false });

export const getFilters = defineOperation({
  name: 'get_filters',
  summary: 'Saved filters',
  description: 'The project’s saved filter_groups (the same schema as the filter_groups of get_project_rows).',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/filters',
  params: ProjectIdParams,
  project: true,
  response: FiltersBody,
  handler: async ({ project }) => ({ filter_groups: project.savedFilters as never }),
});

export const setFilters = defineOperation({
  name: 'set_filters',
  summary: 'Save filters',
  description: 'Saves the project’s filter_groups, checked like the rows endpoint (unknown column or operator is a 422). Pass them to get_project_rows to apply them.',
  hint: 'write',
  method: 'PUT',
  path: '/projects/{project_id}/filters',
  params: ProjectIdParams,
  project: true,
  body: Type.Object({ filter_groups: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  response: FiltersBody,
  handler: async ({ kernel, project, body }) => {
    checkFilterGroups(body.filter_groups, await kernel.storage.projects.columns(project));
    await kernel.storage.projects.setSavedFilters(project.pk, body.filter_groups);
    return { filter_groups: body.filter_groups as never };
  },
});
