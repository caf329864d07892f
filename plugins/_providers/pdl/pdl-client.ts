import {
  type EnrichResult,
  type PluginContext,
  ProviderError,
  type ProviderNeeds,
  providerRequest,
  requireEnv,
  rowFailure,
  Type,
} from 'workflow-service/plugin-sdk';
import { jsonBody, providerFailure } from '../provider-failure.ts';

/**
 * People Data Labs' API v5 (https://docs.peopledatalabs.com), or PDL_BASE_URL for a proxy or a
 * test double, shared by the person and company enrichment tools. The key goes in the X-Api-Key
 * header, never the query string (which ends up in access logs).
 */

const PDL_ENV = { requiredEnv: ['PDL_API_KEY'], optionalEnv: ['PDL_BASE_URL'] };

/**
 * PDL limits each enrichment API on its own, 1,000 requests a minute on paid plans (100 on the
 * free one): each tool has its own budget, 15 a second, under the minute's cap. A free plan's
 * 429s are retried by the host.
 */
export const PDL_PERSON_PROVIDER: ProviderNeeds = { id: 'pdl_person', ...PDL_ENV, rateLimit: { perSecond: 15, burst: 15 } };
export const PDL_COMPANY_PROVIDER: ProviderNeeds = { id: 'pdl_company', ...PDL_ENV, rateLimit: { perSecond: 15, burst: 15 } };

/** PDL's person record (its `data`), the fields the person tool reads. */
export interface PdlPerson {
  id?: string;
  full_name?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  job_title?: string | null;
  job_title_levels?: string[] | null;
  job_company_name?: string | null;
  job_company_website?: string | null;
  linkedin_url?: string | null;
  location_name?: string | null;
  // A string, or `true` on plans that only say an address exists.
  work_email?: string | boolean | null;
}

/** A 200 answer's body (`{status, likelihood, data}` for a person; the company's fields beside them for a company), or why none. */
export type PdlAnswer = { found: Record<string, unknown> } | { none: string };

/**
 * GET {base}/v5/{endpoint}?… with `titlecase=true` (PDL answers lower case otherwise). 404 is PDL's
 * "no record matches" (not billed); any other failure throws a ProviderError in PDL's words.
 */
export async function pdlGet(
  ctx: PluginContext,
  endpoint: 'person/enrich' | 'company/enrich',
  query: Record<string, string>,
): Promise<PdlAnswer> {
  const key = requireEnv(ctx, 'PDL_API_KEY');
  const base = (ctx.env('PDL_BASE_URL') || 'https://api.peopledatalabs.com').replace(/\/+$/, '');
  const res = await providerRequest(ctx, `${base}/v5/${endpoint}?${new URLSearchParams({ ...query, titlecase: 'true' })}`, {
    headers: { 'X-Api-Key': key, accept: 'application/json' },
    timeoutMs: 30_000,
  });
  const body = jsonBody(res) as { error?: { type?: string; message?: string } } | undefined;
  if (res.status === 404) return { none: body?.error?.message ?? 'No records were found matching your request' };
  if (res.status < 200 || res.status >= 300) {
    const e = body?.error;
    throw providerFailure('People Data Labs', res, e ? `${e.message ?? e.type}${e.type ? ` [${e.type}]` : ''}` : undefined, [key]);
  }
  if (!body || typeof body !== 'object')
    throw new ProviderError(`People Data Labs answered HTTP ${res.status} with a body that is not JSON`, res.status, false);
  return { found: body as Record<string, unknown> };
}

/**
 * `rowFailure`, except that 402 (the account's credits are used up) concerns every row, as a bad
 * key does: thrown, so the batch stops instead of asking again for each row.
 */
export function pdlFailure(e: unknown): EnrichResult {
  if (e instanceof ProviderError && e.status === 402) throw e;
  return rowFailure(e);
}

/** Config fields of both tools: PDL's own match rules, which make a weak or incomplete match a 404 (so a waterfall goes on). */
export const MATCH_RULE_FIELDS = {
  min_likelihood: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10,
      description: 'PDL’s match confidence (1–10) a record needs; weaker matches count as not found.',
    }),
  ),
  required: Type.Optional(
    Type.String({
      maxLength: 300,
      description: 'Fields a match must have, in PDL’s syntax ("work_email", "job_title AND linkedin_url"); others count as not found.',
    }),
  ),
};

/** PDL's 1–10 match confidence and the fields a match must have, as query parameters. */
export function matchRules(config: { min_likelihood?: number; required?: string }): Record<string, string> {
  const out: Record<string, string> = {};
  if (config.min_likelihood !== undefined) out.min_likelihood = String(config.min_likelihood);
  if (config.required?.trim()) out.required = config.required.trim();
  return out;
}
