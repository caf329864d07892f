import { Type } from '@sinclair/typebox';
import { defineTool } from '../plugins/plugin-types.ts';
import { IcpDefinitionSchema } from './definition.ts';
import { scoreRow } from './score.ts';

/**
 * The tool of ICP score columns, provided by the kernel (ICPs are a kernel feature; the registry
 * adds it before any plugin, so no plugin can take its id). It scores each row against an ICP. A
 * tool cannot read storage, so the column carries a snapshot of the ICP's definition in its config;
 * score_icp writes that snapshot when it creates the column, which keeps auto-run and re-runs
 * working without a database read here.
 */
export const icpScoreTool = defineTool({
  kind: 'tool',
  id: 'icp_score',
  version: '1.0.0',
  name: 'ICP score',
  summary: 'Scores each row from 0 to 100 on how well it fits your ideal customer profile.',
  description:
    'Scores each row 0–100 against an Ideal Customer Profile (industries, employee and revenue ranges, locations, keywords, titles): the weighted share of the ICP’s criteria the row meets. Usually created by score_icp (POST /icps/{icp_id}/score with col_name), which fills the config. Free, no provider.',
  category: 'scoring',
  tags: ['icp', 'score', 'fit', 'qualification', 'lead scoring'],
  legacyIds: [],
  input: Type.Object(
    {
      icp_id: Type.String({ minLength: 1, description: 'The ICP this column scores against (GET /icps).' }),
      definition: IcpDefinitionSchema,
    },
    { additionalProperties: false },
  ),
  requires: ['icp_id'],
  produces: [{ field: 'icp_score', description: 'Fit score 0–100.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 1000,
  async enrich(items) {
    return items.map((item) => {
      const { score } = scoreRow(item.config.definition, item.row);
      return score === null ? { status: 'no_result' as const, reason: 'the ICP has no criteria' } : { status: 'ok' as const, value: score };
    });
  },
});
