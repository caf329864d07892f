import { type PluginContext, ProviderError, type ProviderNeeds, providerRequest, requireEnv } from 'workflow-service/plugin-sdk';
import { jsonBody, providerFailure } from '../provider-failure.ts';

/**
 * ZeroBounce's validation API v2 (https://www.zerobounce.net/docs/email-validation-api-quickstart/),
 * or ZEROBOUNCE_BASE_URL: https://api-us.zerobounce.net to keep validations in the United States,
 * a proxy, or a test double. ZeroBounce takes the key as the `api_key` query parameter; error texts
 * never carry it.
 */

/**
 * What a ZeroBounce plugin declares as its `provider`. ZeroBounce blocks a key for a minute past
 * 80,000 validations in 10 seconds; 50 a second keeps a deployment far below that.
 */
export const ZEROBOUNCE_PROVIDER: ProviderNeeds = {
  id: 'zerobounce',
  requiredEnv: ['ZEROBOUNCE_API_KEY'],
  optionalEnv: ['ZEROBOUNCE_BASE_URL'],
  rateLimit: { perSecond: 50, burst: 50 },
};

/** The statuses GET /v2/validate answers. */
export const ZEROBOUNCE_STATUSES = ['valid', 'invalid', 'catch-all', 'unknown', 'spamtrap', 'abuse', 'do_not_mail'] as const;
export type ZeroBounceStatus = (typeof ZEROBOUNCE_STATUSES)[number];

/** What GET /v2/validate answers (ZeroBounce sends booleans and numbers partly as text). */
export interface ZeroBounceValidation {
  address?: string;
  status?: ZeroBounceStatus;
  sub_status?: string;
  free_email?: boolean | string;
  did_you_mean?: string | null;
  account?: string | null;
  domain?: string | null;
  domain_age_days?: string | number | null;
  smtp_provider?: string | null;
  mx_found?: boolean | string | null;
  mx_record?: string | null;
  firstname?: string | null;
  lastname?: string | null;
  processed_at?: string | null;
  error?: string;
}

/**
 * GET {base}/v2/validate?api_key=&email=&ip_address= (ZeroBounce wants `ip_address` present, empty
 * when unknown). ZeroBounce answers a bad key or an empty balance with HTTP 200 and `{error}`:
 * thrown as the 401 it means, so every row of the batch stops instead of each asking again.
 */
export async function zeroBounceValidate(ctx: PluginContext, email: string, ipAddress = ''): Promise<ZeroBounceValidation> {
  const key = requireEnv(ctx, 'ZEROBOUNCE_API_KEY');
  const base = (ctx.env('ZEROBOUNCE_BASE_URL') || 'https://api.zerobounce.net').replace(/\/+$/, '');
  const res = await providerRequest(ctx, `${base}/v2/validate?${new URLSearchParams({ api_key: key, email, ip_address: ipAddress })}`, {
    headers: { accept: 'application/json' },
    // ZeroBounce may take a while on a slow mail server before it answers `unknown`.
    timeoutMs: 60_000,
  });
  const body = jsonBody(res) as ZeroBounceValidation | undefined;
  if (res.status < 200 || res.status >= 300) throw providerFailure('ZeroBounce', res, body?.error, [key]);
  if (!body || typeof body !== 'object')
    throw new ProviderError(`ZeroBounce answered HTTP ${res.status} with a body that is not JSON`, res.status, false);
  if (body.error) throw new ProviderError(`ZeroBounce: ${body.error.slice(0, 300)}`, 401, false);
  return body;
}
