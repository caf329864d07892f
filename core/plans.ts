/** What a plan allows. `free` has no API access (REST 403, MCP `forbidden`); `pro` has it. */
export interface PlanRules {
  apiAccess: boolean;
}

const PLANS: Record<string, PlanRules> = {
  free: { apiAccess: false },
  pro: { apiAccess: true },
};

export const PLAN_NAMES = Object.keys(PLANS);

export function planRules(plan: string): PlanRules {
  return PLANS[plan] ?? { apiAccess: false };
}

export const isKnownPlan = (plan: string): boolean => plan in PLANS;
