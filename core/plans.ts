import { type Static, Type } from '@sinclair/typebox';
import { schemaErrors } from './schema/validate.ts';

/** What a plan allows. `free` has no API access (REST 403, MCP `forbidden`); `pro` has it. */
export const PlanRulesSchema = Type.Object(
  {
    apiAccess: Type.Boolean(),
    /** Credits granted at the start of each calendar month (UTC), once. */
    monthlyCredits: Type.Integer({ minimum: 0 }),
    /** Live projects a workspace may hold; null = no limit. */
    maxProjects: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    /** Rows one project may hold; null = no limit. */
    maxRowsPerProject: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    /** API requests per minute per key (REST and MCP); null = no limit. */
    requestsPerMinute: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
  },
  { additionalProperties: false },
);
export type PlanRules = Static<typeof PlanRulesSchema>;

const DEFAULT_PLANS: Record<string, PlanRules> = {
  free: { apiAccess: false, monthlyCredits: 0, maxProjects: 3, maxRowsPerProject: 1_000, requestsPerMinute: 60 },
  pro: { apiAccess: true, monthlyCredits: 0, maxProjects: null, maxRowsPerProject: 1_000_000, requestsPerMinute: 1_200 },
};

let plans: Record<string, PlanRules> = { ...DEFAULT_PLANS };

/**
 * Parses PLANS_JSON: `{"team": {"apiAccess": true, "monthlyCredits": 5000, ...}}` adds a plan;
 * a key naming `free` or `pro` overrides its fields. Throws a message naming the bad field.
 */
export function parsePlans(json: string | undefined): Record<string, PlanRules> {
  if (!json) return { ...DEFAULT_PLANS };
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new Error(`PLANS_JSON is not valid JSON: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('PLANS_JSON must be an object of plan name → rules');
  const out: Record<string, PlanRules> = { ...DEFAULT_PLANS };
  for (const [name, rules] of Object.entries(raw as Record<string, Record<string, unknown>>)) {
    const merged = { ...(DEFAULT_PLANS[name] ?? DEFAULT_PLANS.free), ...rules };
    const errors = schemaErrors(PlanRulesSchema, merged, name);
    if (errors.length) throw new Error(`PLANS_JSON: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`);
    out[name] = merged as PlanRules;
  }
  return out;
}

/** Installs the plans of the configuration (called once at start-up). */
export function configurePlans(next: Record<string, PlanRules>): void {
  plans = next;
}

export function planNames(): string[] {
  return Object.keys(plans);
}

/** An unknown plan (e.g. removed from PLANS_JSON) gets the free plan's rules. */
export function planRules(plan: string): PlanRules {
  return plans[plan] ?? (plans.free as PlanRules);
}

export const isKnownPlan = (plan: string): boolean => plan in plans;
