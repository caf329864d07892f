import { Type } from '@sinclair/typebox';
import { planRules } from '../plans.ts';
import { defineOperation } from './operation.ts';
import { EXAMPLE_PLUGINS } from './examples.ts';

const USAGE_DAYS = 30;

export const getCredits = defineOperation({
  name: 'get_credits',
  summary: 'Credit balance',
  description:
    'The workspace’s credit balance, its plan, whether the plan has API access, and the credits spent per plugin over the last 30 days. Builder rows and paid enrichment tools spend credits (a builder reserves max_results × cost up front and gives back what it did not use); check the balance before a large run.',
  hint: 'read',
  method: 'GET',
  path: '/credits',
  response: Type.Object({
    balance: Type.Number({ description: 'Credits left (reservations of running builds already taken off).' }),
    plan: Type.String(),
    api_access: Type.Boolean(),
    usage: Type.Array(
      Type.Object({ plugin_id: Type.String(), credits: Type.Number({ description: 'Spent over the last 30 days, net of refunds.' }) }),
      { description: 'Spending per builder or tool, largest first.' },
    ),
  }),
  example: { response: { balance: 4980, plan: 'pro', api_access: true, usage: [{ plugin_id: EXAMPLE_PLUGINS.builder, credits: 20 }] } },
  handler: async ({ kernel, workspace }) => ({
    balance: await kernel.storage.credits.balance(workspace.id),
    plan: workspace.plan,
    api_access: planRules(workspace.plan).apiAccess,
    usage: await kernel.storage.credits.usage(workspace.id, Date.now() - USAGE_DAYS * 86_400_000),
  }),
});
