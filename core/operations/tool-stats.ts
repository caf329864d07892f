import { Type } from '@sinclair/typebox';
import { creditsPerResult } from '../columns/auto-order.ts';
import { ServiceError } from '../errors.ts';
import { EXAMPLE_PLUGINS } from './examples.ts';
import { defineOperation } from './operation.ts';

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

export const getToolStats = defineOperation({
  name: 'get_tool_stats',
  summary: 'A tool’s figures in this workspace',
  description:
    'What a tool has done in this workspace: rows tried, results found, hit rate, credits spent (net of refunds), credits per result and mean latency. Estimates and waterfalls with order "auto" read these.',
  hint: 'read',
  method: 'GET',
  path: '/tools/{tool_id}/stats',
  params: Type.Object({ tool_id: Type.String({ description: 'A tool id (GET /tools).' }) }),
  response: Type.Object({
    tool_id: Type.String(),
    attempts: Type.Integer({ description: 'Rows the tool ran on and settled (cached results not counted).' }),
    found: Type.Integer(),
    hit_rate: Type.Union([Type.Number(), Type.Null()], { description: 'found / attempts; null before the first run.' }),
    credits: Type.Integer({ description: 'Credits spent, net of refunds.' }),
    credits_per_result: Type.Union([Type.Number(), Type.Null()], {
      description: 'credits / found; null while nothing was found (0 for free tools).',
    }),
    avg_latency_ms: Type.Union([Type.Number(), Type.Null()], { description: 'Mean time per row.' }),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
  example: {
    params: { tool_id: EXAMPLE_PLUGINS.tool },
    response: {
      tool_id: EXAMPLE_PLUGINS.tool,
      attempts: 1200,
      found: 1164,
      hit_rate: 0.97,
      credits: 0,
      credits_per_result: 0,
      avg_latency_ms: 0.4,
      updated_at: '2026-11-24T16:02:11.000Z',
    },
  },
  handler: async ({ kernel, workspace, params }) => {
    const tool = kernel.plugins.tool(params.tool_id);
    if (!tool) throw new ServiceError('not_found', `No tool "${params.tool_id}" (GET /tools lists them)`);
    const s = (await kernel.storage.toolStats.get(workspace.id, [tool.id])).get(tool.id);
    const perResult = s ? creditsPerResult(s) : Number.NaN;
    return {
      tool_id: tool.id,
      attempts: s?.attempts ?? 0,
      found: s?.found ?? 0,
      hit_rate: s?.attempts ? round(s.found / s.attempts, 4) : null,
      credits: s?.credits ?? 0,
      credits_per_result: Number.isFinite(perResult) ? round(perResult, 4) : null,
      avg_latency_ms: s?.attempts ? round(s.latencyMs / s.attempts, 1) : null,
      updated_at: s ? new Date(s.updatedAt).toISOString() : null,
    };
  },
});
