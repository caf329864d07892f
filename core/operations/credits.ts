import { Type } from '@sinclair/typebox';
import { planRules } from '../plans.ts';
import { defineOperation } from './operation.ts';

export const getCredits = defineOperation({
  name: 'get_credits',
  summary: 'Credit balance',
  description:
    'The workspace’s credit balance, its plan and whether the plan has API access. Builder rows and paid enrichment tools spend credits; check the balance before a large run. usage lists recent spending; it is empty until per-run usage reporting lands.',
  hint: 'read',
  method: 'GET',
  path: '/credits',
  response: Type.Object({
    balance: Type.Number({ description: 'Credits left.' }),
    plan: Type.String(),
    api_access: Type.Boolean(),
    usage: Type.Array(Type.Unknown(), { description: 'Recent spending (empty for now).' }),
  }),
  handler: async ({ kernel, workspace }) => ({
    balance: await kernel.storage.workspaces.balance(workspace.id),
    plan: workspace.plan,
    api_access: planRules(workspace.plan).apiAccess,
    usage: [] as unknown[],
  }),
});
