import { Type } from '@sinclair/typebox';
import { getSchedule, putSchedule } from '../schedules/schedules.ts';
import { EXAMPLE_IDS } from './examples.ts';
import { defineOperation } from './operation.ts';
import { ProjectIdParams } from './schemas.ts';

const ScheduleSchema = Type.Object({
  cron: Type.String(),
  timezone: Type.String(),
  next_run_at: Type.String({ format: 'date-time', description: 'When the builder runs next.' }),
  last_run_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The last due time (null: none yet).' }),
  last_outcome: Type.Union([Type.String(), Type.Null()], {
    description: '"started", or "skipped: …" with the reason (a run still going, credits short…).',
  }),
  created_at: Type.String({ format: 'date-time' }),
});

const EXAMPLE_SCHEDULE = {
  cron: '0 7 * * 1-5',
  timezone: 'Europe/Paris',
  next_run_at: '2026-11-27T06:00:00.000Z',
  last_run_at: '2026-11-26T06:00:00.105Z',
  last_outcome: 'started',
  created_at: '2026-11-20T10:00:00.000Z',
};

export const setProjectSchedule = defineOperation({
  name: 'set_project_schedule',
  summary: 'Run the builder on a schedule',
  description:
    'Runs the project’s builder again on a cron schedule (5 fields, or 6 with seconds; e.g. "0 7 * * 1-5" is 7:00 on weekdays) in an IANA time zone, adding only rows whose unique key is new (the project needs unique_columns). Runs never overlap (a due time while a run is going is skipped), survive restarts, spend under the calling API key’s monthly cap, and appear in lead_gen_execution_log. Replaces any earlier schedule.',
  hint: 'write',
  method: 'PUT',
  path: '/projects/{project_id}/schedule',
  params: ProjectIdParams,
  project: true,
  body: Type.Object(
    {
      cron: Type.String({ minLength: 1, maxLength: 128, description: 'A cron pattern, e.g. "0 7 * * 1-5".' }),
      timezone: Type.Optional(
        Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris (default UTC).' }),
      ),
    },
    { additionalProperties: false },
  ),
  response: ScheduleSchema,
  example: {
    params: { project_id: EXAMPLE_IDS.project },
    body: { cron: EXAMPLE_SCHEDULE.cron, timezone: EXAMPLE_SCHEDULE.timezone },
    response: { ...EXAMPLE_SCHEDULE, last_run_at: null, last_outcome: null },
  },
  handler: ({ kernel, project, body, keyId }) =>
    putSchedule(kernel, project, { cron: body.cron.trim(), timezone: body.timezone ?? 'UTC' }, keyId),
});

export const getProjectSchedule = defineOperation({
  name: 'get_project_schedule',
  summary: 'A project’s schedule',
  description: 'The project’s schedule: its cron, time zone, next run, and what the last due time did. 404 when it has none.',
  hint: 'read',
  method: 'GET',
  path: '/projects/{project_id}/schedule',
  params: ProjectIdParams,
  project: true,
  response: ScheduleSchema,
  example: { params: { project_id: EXAMPLE_IDS.project }, response: EXAMPLE_SCHEDULE },
  handler: ({ kernel, project }) => getSchedule(kernel, project),
});

export const deleteProjectSchedule = defineOperation({
  name: 'delete_project_schedule',
  summary: 'Stop a schedule',
  description: 'The project’s builder no longer runs on a schedule (a run under way goes on).',
  hint: 'destructive',
  method: 'DELETE',
  path: '/projects/{project_id}/schedule',
  params: ProjectIdParams,
  project: true,
  response: Type.Object({ deleted: Type.Boolean({ description: 'false: the project had no schedule.' }) }),
  example: { params: { project_id: EXAMPLE_IDS.project }, response: { deleted: true } },
  handler: async ({ kernel, project }) => ({ deleted: await kernel.storage.schedules.remove(project.pk) }),
});
