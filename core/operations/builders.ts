import { Type } from '@sinclair/typebox';
import { builderCatalogItem } from '../services/projects.ts';
import { defineOperation } from './operation.ts';
import { EXAMPLE_PLUGINS } from './examples.ts';

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
      summary: Type.String({ description: 'What it does, in one plain sentence for people (the console shows it).' }),
      description: Type.String({ description: 'What it does, needs and costs, for agents and programs.' }),
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
  example: {
    response: [
      {
        builder_id: EXAMPLE_PLUGINS.builder,
        name: 'Google Maps search',
        summary: 'Finds businesses on Google Maps, such as “dentists in Lyon”: one row per place.',
        description:
          'Finds businesses with a Google Maps text search (for example "dentists in Lyon") and creates one row per place with name, address, phone, website, rating and category. Live mode needs GOOGLE_MAPS_API_KEY. Costs 1 credit per row.',
        category: 'companies',
        cost: { credits: 1, per: 'row' },
        max_rows: 500,
        form_data: { query: '', max_results: '' },
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['query', 'max_results'],
          properties: {
            query: { type: 'string', minLength: 1, description: 'What and where, as typed in Google Maps.' },
            max_results: { type: 'integer', minimum: 1, maximum: 500, description: 'Rows to create, 1 to 500.' },
          },
        },
      },
    ],
  },
  handler: async ({ kernel }) => kernel.plugins.listBuilders().map(builderCatalogItem),
});
