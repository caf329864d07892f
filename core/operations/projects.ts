import { Type } from '@sinclair/typebox';
import { estimateBuild } from '../services/estimates.ts';
import { waitOn } from '../services/project-work.ts';
import { createProjectFromBuilder, projectDetails, projectSummary, renameProject } from '../services/projects.ts';
import { EXAMPLE_IDS, EXAMPLE_PROJECT, EXAMPLE_PROJECT_NAME, EXAMPLE_TIMES, EXAMPLE_PLUGINS } from './examples.ts';
import { JsonQueryParam } from './json-query.ts';
import { defineOperation } from './operation.ts';
import { EstimateSchema, ProjectDetailsSchema, ProjectIdParams, ProjectSummarySchema } from './schemas.ts';

export const createProject = defineOperation({
  name: 'run_builder',
  summary: 'Create a project from a builder',
  description:
    'Creates a project from a builder and a filled form, then starts the builder in the background. Poll GET /projects/{project_id} until builder_status.type is completed or failed.',
  hint: 'write',
  method: 'POST',
  path: '/projects',
  body: Type.Object(
    {
      builder_id: Type.String({ description: 'Builder slug or legacy id (GET /project-builders).' }),
      form_data: Type.Record(Type.String(), Type.Unknown(), { description: "The builder's filled form." }),
      name: Type.Optional(Type.String({ maxLength: 255, description: 'Project name; derived from the form when omitted.' })),
    },
    { additionalProperties: false },
  ),
  invalidStatus: 400,
  successStatus: 201,
  response: Type.Object({ project_id: Type.String() }),
  errors: {
    400: 'Invalid builder_id or form_data.',
    402: 'The balance is short of what the run reserves (max_results × the builder’s cost per row); detail.needed and detail.balance say by how much.',
    403: 'The workspace already holds its plan’s number of projects (detail.code quota_exceeded).',
    500: 'Unexpected failure creating or starting the build.',
  },
  example: {
    body: { builder_id: EXAMPLE_PLUGINS.builder, form_data: { query: 'dentists in Lyon', max_results: 20 }, name: EXAMPLE_PROJECT_NAME },
    response: { project_id: EXAMPLE_IDS.project },
  },
  waitable: 'created',
  spends: true,
  handler: ({ kernel, workspace, body, keyId }) => createProjectFromBuilder(kernel, workspace, body, keyId),
});

export const listProjects = defineOperation({
  name: 'list_projects',
  summary: 'List projects',
  description: 'Lists the workspace’s projects, most recently updated first, with paging and a case-insensitive name search.',
  hint: 'read',
  method: 'GET',
  path: '/projects',
  query: Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1 to 200.' }),
    offset: Type.Integer({ minimum: 0, default: 0, description: 'Projects to skip; ignored when page is set.' }),
    page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page; offset = (page - 1) * limit.' })),
    name_search: Type.Optional(Type.String({ description: 'Case-insensitive substring of the project name.' })),
  }),
  response: Type.Object({
    projects: Type.Array(ProjectSummarySchema),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
    page: Type.Integer(),
  }),
  example: {
    query: { limit: 10, name_search: 'dentists' },
    response: {
      projects: [
        { id: EXAMPLE_IDS.project, name: EXAMPLE_PROJECT_NAME, creator_id: EXAMPLE_IDS.workspace, company_count: 20, ...EXAMPLE_TIMES },
      ],
      total: 1,
      limit: 10,
      offset: 0,
      page: 1,
    },
  },
  handler: async ({ kernel, workspace, query }) => {
    const offset = query.page !== undefined ? (query.page - 1) * query.limit : query.offset;
    const { projects, total } = await kernel.storage.projects.list({
      workspaceId: workspace.id,
      limit: query.limit,
      offset,
      nameSearch: query.name_search,
    });
    const counts = await kernel.storage.rows.counts(projects.map((p) => p.pk));
    return {
      projects: projects.map((p) => projectSummary(p, counts.get(p.pk) ?? 0)),
      total,
      limit: query.limit,
      offset,
      page: query.page ?? Math.floor(offset / query.limit) + 1,
    };
  },
});

export const getProject = defineOperation({
  name: 'get_project',
  summary: 'Project details',
  description:
    'Columns, a sample row, the row count and the builder status of a project. To wait for the builder run, call wait_for_project rather than polling this.',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}',
  params: ProjectIdParams,
  project: true,
  response: ProjectDetailsSchema,
  example: { params: { project_id: EXAMPLE_IDS.project }, response: EXAMPLE_PROJECT },
  handler: ({ kernel, project }) => projectDetails(kernel, project),
});

export const updateProject = defineOperation({
  name: 'update_project',
  summary: 'Rename a project',
  description: 'Renames a project. Answers its details, as get_project does.',
  hint: 'write',
  method: 'PATCH',
  path: '/projects/{project_id}',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 255, description: 'The project’s new name.' }) },
    { additionalProperties: false },
  ),
  response: ProjectDetailsSchema,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { name: 'Dentists in Lyon (2026)' },
    response: { ...EXAMPLE_PROJECT, name: 'Dentists in Lyon (2026)' },
  },
  handler: ({ kernel, project, body }) => renameProject(kernel, project, body.name),
});

/** Longest wait one call may ask for: under the 60 s many clients and proxies allow a request. */
export const MAX_WAIT_SECONDS = 50;

export const WaitStateSchema = Type.Object({
  ended: Type.Boolean({ description: 'Whether the builder run and the watched cells have ended (false: the time passed first).' }),
  waited_seconds: Type.Number(),
  builder: Type.Object({
    status: Type.String({ description: 'queued, running, completed or failed.' }),
    rows_created: Type.Optional(Type.Integer()),
    target: Type.Optional(Type.Integer()),
  }),
  cells_working: Type.Integer({ description: 'Cells of the watched tool columns still queued or running.' }),
});

export const waitForProject = defineOperation({
  name: 'wait_for_project',
  summary: 'Wait for a project’s work',
  description:
    'Waits until the project’s builder run and its queued or running tool cells have ended, or wait_seconds have passed, instead of polling get_project. Sends progress notifications when the request carries a progressToken. Answers whether the work ended.',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/wait',
  params: ProjectIdParams,
  project: true,
  query: Type.Object({
    wait_seconds: Type.Integer({ minimum: 0, maximum: MAX_WAIT_SECONDS, default: 30, description: `0 to ${MAX_WAIT_SECONDS}.` }),
    col_ids: Type.Optional(JsonQueryParam({ description: 'JSON array of the tool column ids to wait for; default: every tool column.' })),
  }),
  response: WaitStateSchema,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    query: { wait_seconds: 30 },
    response: { ended: true, waited_seconds: 4.2, builder: { status: 'completed' }, cells_working: 0 },
  },
  handler: ({ kernel, project, query, progress, signal }) =>
    waitOn(kernel, project, query.wait_seconds ?? 30, query.col_ids, { progress, signal }),
});

export const estimateBuilder = defineOperation({
  name: 'estimate_builder',
  summary: 'Estimate a builder run',
  description:
    'What run_builder with the same builder_id and form_data would cost, without creating anything: rows it aims at (cells), credits_max (what it reserves: rows × the builder’s cost per row; rows not written are given back), credits_expected, balance and balance_after.',
  hint: 'read',
  method: 'POST',
  path: '/projects/estimate',
  body: createProject.body,
  invalidStatus: 400,
  response: EstimateSchema,
  errors: { 400: 'Invalid builder_id or form_data.' },
  example: {
    body: { builder_id: EXAMPLE_PLUGINS.builder, form_data: { query: 'dentists in Lyon', max_results: 20 } },
    response: { cells: 20, credits_max: 20, credits_expected: 20, balance: 1000, balance_after: 980 },
  },
  handler: ({ kernel, workspace, body }) => estimateBuild(kernel, workspace, body),
});
