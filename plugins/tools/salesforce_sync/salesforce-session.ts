import { createHash } from 'node:crypto';
import { type PluginContext, ProviderError, type ProviderNeeds, providerRequest, redact, requireEnv } from 'workflow-service/plugin-sdk';

/**
 * Who we are to Salesforce: an OAuth access token and the org's instance URL, from the declared
 * env. The access token of a connected app expires with the session (2 hours by default), so when
 * a refresh token and the connected app's consumer key are set too, an expired or missing token is
 * renewed through the refresh-token flow (POST {login}/services/oauth2/token) and kept in this
 * process for the rows after it.
 */

export const SALESFORCE_PROVIDER: ProviderNeeds = {
  id: 'salesforce',
  requiredEnv: ['SALESFORCE_INSTANCE_URL', 'SALESFORCE_ACCESS_TOKEN'],
  optionalEnv: [
    'SALESFORCE_REFRESH_TOKEN',
    'SALESFORCE_CLIENT_ID',
    'SALESFORCE_CLIENT_SECRET',
    'SALESFORCE_LOGIN_URL',
    'SALESFORCE_API_VERSION',
  ],
  // Salesforce counts API requests per org per 24 h (Enterprise: 100,000 plus 1,000 per licence)
  // rather than per second; 5 per second keeps one big table from spending an org's day in an hour.
  rateLimit: { perSecond: 5, burst: 10 },
};

export interface Session {
  instanceUrl: string;
  accessToken: string;
}

export interface Refresh {
  loginUrl: string;
  clientId: string;
  clientSecret?: string;
  refreshToken: string;
  /** A hash of the above, to find this flow's renewed session. */
  id: string;
}

/** Sessions the refresh-token flow gave, by flow: shared by every row of this process. */
const renewed = new Map<string, Promise<Session>>();

const trimmed = (url: string) => url.trim().replace(/\/+$/, '');

function refreshOf(ctx: PluginContext): Refresh | null {
  const refreshToken = ctx.env('SALESFORCE_REFRESH_TOKEN');
  if (!refreshToken) return null;
  const clientId = ctx.env('SALESFORCE_CLIENT_ID');
  if (!clientId)
    throw new ProviderError(
      'SALESFORCE_REFRESH_TOKEN is set but SALESFORCE_CLIENT_ID (the connected app’s consumer key) is not: set it too',
      null,
      false,
    );
  const loginUrl = trimmed(ctx.env('SALESFORCE_LOGIN_URL') || 'https://login.salesforce.com');
  const clientSecret = ctx.env('SALESFORCE_CLIENT_SECRET');
  const id = createHash('sha256').update([loginUrl, clientId, clientSecret, refreshToken].join('\n')).digest('hex');
  return { loginUrl, clientId, clientSecret, refreshToken, id };
}

/** The refresh-token grant; a refusal concerns every row (status 401: the host fails the batch). */
async function refreshGrant(ctx: PluginContext, r: Refresh): Promise<Session> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', client_id: r.clientId, refresh_token: r.refreshToken });
  if (r.clientSecret) form.set('client_secret', r.clientSecret);
  const res = await providerRequest(ctx, `${r.loginUrl}/services/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: form.toString(),
    timeoutMs: 20_000,
  });
  const secrets = [r.refreshToken, ...(r.clientSecret ? [r.clientSecret] : [])];
  let body: { access_token?: string; instance_url?: string; error?: string; error_description?: string } = {};
  try {
    body = JSON.parse(res.text());
  } catch {}
  if (res.status === 200 && body.access_token && body.instance_url)
    return { accessToken: body.access_token, instanceUrl: trimmed(body.instance_url) };
  if (res.status === 429 || res.status >= 500)
    throw new ProviderError(`Salesforce's token endpoint answered HTTP ${res.status}`, res.status, true);
  const why = redact([body.error, body.error_description].filter(Boolean).join(': ') || res.text().slice(0, 200), secrets);
  throw new ProviderError(
    `Salesforce refused to renew the access token with SALESFORCE_REFRESH_TOKEN (HTTP ${res.status}: ${why}): check it, SALESFORCE_CLIENT_ID and SALESFORCE_LOGIN_URL (https://test.salesforce.com for a sandbox org)`,
    401,
    false,
  );
}

/** A renewed session, one refresh at a time per flow: rows that find the same token expired share the renewal. */
export async function renew(ctx: PluginContext, r: Refresh, expired?: string): Promise<Session> {
  const current = renewed.get(r.id);
  if (current) {
    const known = await current.catch(() => null);
    if (known && known.accessToken !== expired) return known;
    // Another row may have started the renewal while this one waited.
    const latest = renewed.get(r.id);
    if (latest && latest !== current) return latest;
  }
  const next = refreshGrant(ctx, r);
  renewed.set(r.id, next);
  // A failed renewal is not kept: the next row tries again.
  next.catch(() => {
    if (renewed.get(r.id) === next) renewed.delete(r.id);
  });
  return next;
}

/**
 * The session for a request, and how to renew it when Salesforce says it expired (null without the
 * refresh-token flow). Throws naming the variables to set when there is neither a token nor a flow.
 */
export async function session(ctx: PluginContext): Promise<{ current: Session; renewal: Refresh | null }> {
  const refresh = refreshOf(ctx);
  const kept = refresh && renewed.get(refresh.id);
  if (refresh && kept) return { current: await kept, renewal: refresh };
  const accessToken = ctx.env('SALESFORCE_ACCESS_TOKEN');
  if (!refresh) {
    const instanceUrl = trimmed(requireEnv(ctx, 'SALESFORCE_INSTANCE_URL'));
    if (!accessToken)
      throw new ProviderError(
        'SALESFORCE_ACCESS_TOKEN is not set (nor SALESFORCE_REFRESH_TOKEN with SALESFORCE_CLIENT_ID to get one); set it or run with PROVIDER_MODE=sandbox',
        null,
        false,
      );
    return { current: { instanceUrl, accessToken }, renewal: null };
  }
  const instanceUrl = ctx.env('SALESFORCE_INSTANCE_URL');
  if (accessToken && instanceUrl) return { current: { instanceUrl: trimmed(instanceUrl), accessToken }, renewal: refresh };
  return { current: await renew(ctx, refresh), renewal: refresh };
}
