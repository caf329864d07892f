import { Type } from '@sinclair/typebox';
import { IcpDefinitionSchema } from '../icp/definition.ts';
import { CRITERIA } from '../icp/score.ts';
import { TOP_MATCHES } from '../icp/score-tally.ts';
import {
  ICP_SCORE_TOOL,
  INLINE_ROWS,
  createIcp,
  findIcp,
  findScoreRun,
  icpView,
  scoreProject,
  scoreRunView,
  updateIcp,
} from '../services/icps.ts';
import type { Kernel } from '../kernel.ts';
import type { Workspace } from '../model.ts';
import { EXAMPLE_ICP, EXAMPLE_ICP_DEFINITION, EXAMPLE_IDS, EXAMPLE_SCORE_COLUMN, EXAMPLE_TIMES, EXAMPLE_TOP_MATCHES } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ColumnSchema } from './schemas.ts';

/** Another workspace's ICP is a 404 before anything of the request is looked at. */
const ownIcp = async ({ kernel, workspace, params }: { kernel: Kernel; workspace: Workspace; params: Record<string, string> }) => {
  await findIcp(kernel, workspace, params.icp_id ?? '');
};

const IcpIdParams = Type.Object({ icp_id: Type.String({ description: 'ICP id (list_icps / GET /icps).' }) });

const IcpSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  definition: IcpDefinitionSchema,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const IcpName = Type.String({ minLength: 1, maxLength: 255, description: 'A name you will recognise, e.g. "EU mid-market SaaS".' });

const weights = Object.entries(CRITERIA)
  .map(([c, { weight }]) => `${c} ${weight}`)
  .join(', ');

export const listIcps = defineOperation({
  name: 'list_icps',
  summary: 'List ICPs',
  description:
    'The workspace’s Ideal Customer Profiles (oldest first), each with its definition. Score a project against one with score_icp.',
  hint: 'read',
  method: 'GET',
  path: '/icps',
  response: Type.Array(IcpSchema),
  example: { response: [EXAMPLE_ICP] },
  handler: async ({ kernel, workspace }) => (await kernel.storage.icps.list(workspace.id)).map(icpView),
});

export const createIcpOp = defineOperation({
  name: 'create_icp',
  summary: 'Create an ICP',
  description:
    'Saves a named Ideal Customer Profile: industries, employee_range {min,max}, revenue_range {min,max}, locations, keywords and titles, all optional. Terms match whole words, case-insensitively.',
  hint: 'write',
  method: 'POST',
  path: '/icps',
  body: Type.Object({ name: IcpName, definition: IcpDefinitionSchema }, { additionalProperties: false }),
  successStatus: 201,
  response: IcpSchema,
  example: { body: { name: EXAMPLE_ICP.name, definition: EXAMPLE_ICP_DEFINITION }, response: EXAMPLE_ICP },
  handler: ({ kernel, workspace, body }) => createIcp(kernel, workspace, body),
});

export const getIcp = defineOperation({
  name: 'get_icp',
  summary: 'One ICP',
  description: 'One ICP of the workspace with its definition.',
  hint: 'read',
  method: 'GET',
  path: '/icps/{icp_id}',
  params: IcpIdParams,
  owned: ownIcp,
  response: IcpSchema,
  example: { params: { icp_id: EXAMPLE_IDS.icp }, response: EXAMPLE_ICP },
  handler: async ({ kernel, workspace, params }) => icpView(await findIcp(kernel, workspace, params.icp_id)),
});

export const updateIcpOp = defineOperation({
  name: 'update_icp',
  summary: 'Update an ICP',
  description:
    'Renames an ICP and/or replaces its whole definition (fields left out of the new definition are no longer scored). Score columns made earlier keep the definition they were scored with.',
  hint: 'write',
  method: 'PUT',
  path: '/icps/{icp_id}',
  params: IcpIdParams,
  owned: ownIcp,
  body: Type.Object({ name: Type.Optional(IcpName), definition: Type.Optional(IcpDefinitionSchema) }, { additionalProperties: false }),
  response: IcpSchema,
  example: {
    params: { icp_id: EXAMPLE_IDS.icp },
    body: { name: 'Lyon and Villeurbanne dental practices', definition: { industries: ['dentist'], locations: ['Lyon', 'Villeurbanne'] } },
    response: {
      ...EXAMPLE_ICP,
      name: 'Lyon and Villeurbanne dental practices',
      definition: { industries: ['dentist'], locations: ['Lyon', 'Villeurbanne'] },
      updatedAt: EXAMPLE_TIMES.updatedAt,
    },
  },
  handler: ({ kernel, workspace, params, body }) => updateIcp(kernel, workspace, params.icp_id, body),
});

export const deleteIcp = defineOperation({
  name: 'delete_icp',
  summary: 'Delete an ICP',
  description: 'Deletes an ICP for good. Score columns already written keep their values.',
  hint: 'destructive',
  method: 'DELETE',
  path: '/icps/{icp_id}',
  params: IcpIdParams,
  owned: ownIcp,
  response: Type.Object({ deleted: Type.Literal(true) }),
  example: { params: { icp_id: EXAMPLE_IDS.icp }, response: { deleted: true } },
  handler: async ({ kernel, workspace, params }) => {
    await findIcp(kernel, workspace, params.icp_id);
    await kernel.storage.icps.delete(workspace.id, params.icp_id);
    return { deleted: true as const };
  },
});

const TopSchema = Type.Array(
  Type.Object({
    row_id: Type.String(),
    score: Type.Integer({ minimum: 0, maximum: 100 }),
    reasons: Type.Array(Type.Object({ criterion: Type.String(), weight: Type.Integer(), met: Type.Boolean(), reason: Type.String() })),
  }),
  { description: `The best-fitting rows (at most ${TOP_MATCHES}), highest score first, ties in row order.` },
);

const RunStatus = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]);

export const scoreIcp = defineOperation({
  name: 'score_icp',
  summary: 'Score a project against an ICP',
  description:
    `Scores every row of a project 0–100 against the ICP: the weighted share of the ICP’s criteria the row meets (weights: ${weights}; criteria the ICP leaves out are not scored, a missing value counts as not met). ` +
    `Columns read, by name, case-insensitively: ${Object.entries(CRITERIA)
      .map(([c, { columns }]) => `${c} ← ${columns.join('/')}`)
      .join('; ')}. ` +
    `A project of at most ${INLINE_ROWS.toLocaleString('en-US')} rows is scored at once: status "completed", and preview (partial false) is the whole result — the count, the average and the ${TOP_MATCHES} best rows with a reason per criterion. ` +
    `A larger project is scored in the background: status "queued", preview covers its first ${INLINE_ROWS.toLocaleString('en-US')} rows only (partial true); follow run_id with get_icp_score_run for the whole result. ` +
    `With col_name the scores are also written into that tool column (created as an "${ICP_SCORE_TOOL}" column if missing; its cells show "queued" until scored), ready to filter and sort. Free.`,
  hint: 'write',
  method: 'POST',
  path: '/icps/{icp_id}/score',
  params: IcpIdParams,
  owned: ownIcp,
  body: Type.Object(
    {
      project_id: Type.String({ description: 'The project whose rows are scored.' }),
      col_name: Type.Optional(
        Type.String({ minLength: 1, maxLength: 255, description: 'Write the scores into this tool column (created when missing).' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: Type.Object({
    icp_id: Type.String(),
    project_id: Type.String(),
    run_id: Type.String({ description: 'The scoring run; get_icp_score_run (GET /icps/{icp_id}/score/{run_id}) tells where it stands.' }),
    status: Type.Union([Type.Literal('completed'), Type.Literal('queued')], {
      description: `completed: scored at once (at most ${INLINE_ROWS.toLocaleString('en-US')} rows); queued: scored in the background.`,
    }),
    column: Type.Union([ColumnSchema, Type.Null()], { description: 'The score column, when col_name was given.' }),
    rows_total: Type.Integer({ description: 'Rows of the project when asked.' }),
    preview: Type.Object(
      {
        rows_considered: Type.Integer({ description: 'Rows this preview scored: the first ones, in insertion order.' }),
        partial: Type.Boolean({
          description: 'true when the project has more rows than the preview scored (see the run for all of them).',
        }),
        scored: Type.Integer({ description: 'Rows scored in the preview.' }),
        average_score: Type.Union([Type.Number(), Type.Null()]),
        top: TopSchema,
      },
      {
        description: `The result over the first ${INLINE_ROWS.toLocaleString('en-US')} rows, i.e. the whole result when partial is false.`,
      },
    ),
  }),
  errors: { 404: 'The icp_id of the path or the project_id of the body names nothing in this workspace.' },
  example: {
    params: { icp_id: EXAMPLE_IDS.icp },
    body: { project_id: EXAMPLE_IDS.project, col_name: 'Fit' },
    response: {
      icp_id: EXAMPLE_IDS.icp,
      project_id: EXAMPLE_IDS.project,
      run_id: EXAMPLE_IDS.run,
      status: 'completed',
      column: EXAMPLE_SCORE_COLUMN,
      rows_total: 20,
      preview: { rows_considered: 20, partial: false, scored: 20, average_score: 62.5, top: EXAMPLE_TOP_MATCHES },
    },
  },
  handler: ({ kernel, workspace, params, body }) => scoreProject(kernel, workspace, params.icp_id, body),
});

export const getIcpScoreRun = defineOperation({
  name: 'get_icp_score_run',
  summary: 'Where a score run stands',
  description:
    'The run started by score_icp: status (queued → running → completed | failed, with error_message), rows_done of rows_total, and the count, average and best rows over the rows scored so far — over the whole project once completed.',
  hint: 'read',
  method: 'GET',
  path: '/icps/{icp_id}/score/{run_id}',
  params: Type.Object({ icp_id: Type.String({ description: 'ICP id.' }), run_id: Type.String({ description: 'run_id from score_icp.' }) }),
  // The run's own workspace decides (it stays readable after its ICP is deleted).
  owned: async ({ kernel, workspace, params }) => void (await findScoreRun(kernel, workspace, params.icp_id ?? '', params.run_id ?? '')),
  response: Type.Object({
    run_id: Type.String(),
    icp_id: Type.String(),
    project_id: Type.String(),
    status: RunStatus,
    column: Type.Union([ColumnSchema, Type.Null()], {
      description: 'The score column, when the run writes one (null once the project is deleted).',
    }),
    rows_total: Type.Integer({ description: 'Rows of the project when the run was asked for.' }),
    rows_done: Type.Integer({ description: 'Rows scored so far.' }),
    scored: Type.Integer({ description: 'Rows scored so far that have a score.' }),
    average_score: Type.Union([Type.Number(), Type.Null()]),
    top: TopSchema,
    error_message: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  }),
  example: {
    params: { icp_id: EXAMPLE_IDS.icp, run_id: EXAMPLE_IDS.run },
    response: {
      run_id: EXAMPLE_IDS.run,
      icp_id: EXAMPLE_IDS.icp,
      project_id: EXAMPLE_IDS.project,
      status: 'completed',
      column: EXAMPLE_SCORE_COLUMN,
      rows_total: 20,
      rows_done: 20,
      scored: 20,
      average_score: 62.5,
      top: EXAMPLE_TOP_MATCHES,
      error_message: null,
      ...EXAMPLE_TIMES,
    },
  },
  handler: async ({ kernel, workspace, params }) =>
    scoreRunView(kernel, await findScoreRun(kernel, workspace, params.icp_id, params.run_id)),
});
