import { Type } from '@sinclair/typebox';
import { checkFilterGroups } from '../rows/filter-parse.ts';
import { FilterGroups, type FilterGroupsInput } from '../rows/filter-schema.ts';
import { fits } from '../schema/validate.ts';
import { EXAMPLE_FILTER_GROUPS, EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';

const FiltersBody = Type.Object({ filter_groups: FilterGroups }, { additionalProperties: false });

/**
 * Filters as saved: checked by checkFilterGroups on the way in (it accepts only what FilterGroups
 * describes, with sharper messages), kept by storage as plain JSON. The compiled check narrows
 * them back to their type; one that does not fit would be a bug, not a client mistake.
 */
function filterGroups(groups: unknown[]): FilterGroupsInput {
  if (fits(FilterGroups, groups)) return groups;
  throw new Error('saved filter_groups do not fit the FilterGroups schema');
}

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
  example: { params: { project_id: EXAMPLE_IDS.project }, response: { filter_groups: EXAMPLE_FILTER_GROUPS } },
  handler: async ({ project }) => ({ filter_groups: filterGroups(project.savedFilters) }),
});

export const setFilters = defineOperation({
  name: 'set_filters',
  summary: 'Save filters',
  description:
    'Saves the project’s filter_groups, checked like the rows endpoint (unknown column or operator is a 422). Pass them to get_project_rows to apply them.',
  hint: 'write',
  method: 'PUT',
  path: '/projects/{project_id}/filters',
  params: ProjectIdParams,
  project: true,
  body: Type.Object({ filter_groups: Type.Array(Type.Unknown()) }, { additionalProperties: false }),
  response: FiltersBody,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { filter_groups: EXAMPLE_FILTER_GROUPS },
    response: { filter_groups: EXAMPLE_FILTER_GROUPS },
  },
  handler: async ({ kernel, project, body }) => {
    checkFilterGroups(body.filter_groups, await kernel.storage.projects.columns(project));
    const saved = filterGroups(body.filter_groups);
    await kernel.storage.projects.setSavedFilters(project.pk, saved);
    return { filter_groups: saved };
  },
});
