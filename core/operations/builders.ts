import { Type } from '@sinclair/typebox';
import { builderCatalogItem } from '../services/projects.ts';
import { defineOperation } from './operation.ts';

export const listBuilders = defineOperation({
  name: 'list_builders',
  summary: 'List builders',
  description:
    'Lists the builders that can start a project, each with its empty form_data template and JSON Schema. Fill the template and pass it to run_builder / POST /projects.',
  hint: 'read',
  method: 'GET',
  path: '/project-builders',
  response: Type.Array(
    Type.Object({
      builder_id: Type.String(),
      name: Type.String(),
      description: Type.String(),
      category: Type.String(),
      cost: Type.Object({ credits: Type.Number(), per: Type.String() }),
      max_rows: Type.Integer({
        description:
          'Most rows one run writes (the plan’s rows per project may stop it sooner). A source with more stops there and the run completes with builder_status.warning.',
      }),
      form_data: Type.Record(Type.String(), Type.Unknown()),
      schema: Type.Unknown(),
    }),
  ),
  handler: async ({ kernel }) => kernel.plugins.listBuilders().map(builderCatalogItem),
});
