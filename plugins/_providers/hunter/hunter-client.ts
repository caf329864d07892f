import { type PluginContext, type ProviderNeeds, providerRequest, requireEnv } from 'workflow-service/plugin-sdk';
import { jsonBody, providerFailure } from '../provider-failure.ts';

/**
 * Hunter's API v2 (https://hunter.io/api-documentation/v2), or HUNTER_BASE_URL for a proxy or a
 * test double. Hunter takes the key as the `api_key` query parameter; error texts never carry it.
 */

/**
 * What a Hunter plugin declares as its `provider`. Hunter allows 15 Email Finder requests a second
 * and 500 a minute per key: 8 a second stays under the minute's cap, bursts of 15 under the second's.
 */
export const HUNTER_PROVIDER: ProviderNeeds = {
  id: 'hunter',
  requiredEnv: ['HUNTER_API_KEY'],
  optionalEnv: ['HUNTER_BASE_URL'],
  rateLimit: { perSecond: 8, burst: 15 },
};

/** One entry of Hunter's `errors` array. */
interface HunterError {
  id?: string;
  code?: number;
  details?: string;
}

/** What GET /v2/email-finder answers in `data`. */
export interface HunterFinding {
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  score?: number | null;
  domain?: string | null;
  accept_all?: boolean | null;
  position?: string | null;
  company?: string | null;
  linkedin_url?: string | null;
  twitter?: string | null;
  phone_number?: string | null;
  sources?: { domain?: string; uri?: string; extracted_on?: string; last_seen_on?: string; still_on_page?: boolean }[];
  verification?: { date?: string | null; status?: string | null } | null;
}

/** Hunter's answer to one lookup: `data`, or why there is none for this row. */
export type HunterAnswer = { found: HunterFinding } | { none: string };

/**
 * GET {base}/v2/{endpoint}?…&api_key=. A 404 or 451 (the person asked Hunter to stop sharing their
 * address) is this row's "nothing"; any other failure throws a ProviderError in Hunter's words.
 * Hunter answers its per-second rate limit with 403 (429 is the plan's monthly quota): both are
 * retried by the host.
 */
export async function hunterGet(ctx: PluginContext, endpoint: string, query: Record<string, string>): Promise<HunterAnswer> {
  const key = requireEnv(ctx, 'HUNTER_API_KEY');
  const base = (ctx.env('HUNTER_BASE_URL') || 'https://api.hunter.io').replace(/\/+$/, '');
  const res = await providerRequest(ctx, `${base}/v2/${endpoint}?${new URLSearchParams({ ...query, api_key: key })}`, {
    headers: { accept: 'application/json' },
    timeoutMs: 30_000,
  });
  const body = jsonBody(res) as { data?: HunterFinding; errors?: HunterError[] } | undefined;
  const error = body?.errors?.[0];
  if (res.status === 404 || res.status === 451) return { none: error?.details ?? 'Hunter has no address for this person' };
  if (res.status < 200 || res.status >= 300) {
    const detail = error ? `${error.details ?? error.id}${error.id ? ` [${error.id}]` : ''}` : undefined;
    throw providerFailure('Hunter', res, detail, [key], res.status === 403 ? true : undefined);
  }
  return body?.data ? { found: body.data } : { none: 'Hunter answered without data' };
}
