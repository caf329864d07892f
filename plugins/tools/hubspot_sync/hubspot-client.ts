import { createHash } from 'node:crypto';
import { type PluginContext, ProviderError, type ProviderNeeds, redact, requireEnv, type SafeResponse } from 'workflow-service/plugin-sdk';
import { retryAfterMs, sendPaced } from '../../_crm/pacing.ts';
import { ConfigRefused } from '../../_crm/sync-result.ts';

/**
 * HubSpot's CRM API (api.hubapi.com, or HUBSPOT_BASE_URL for a test double) with a private app's
 * access token. One JSON request at a time, paced by HubSpot's throttle answers, every failure a
 * ProviderError in HubSpot's own words with the token taken out.
 */

export const HUBSPOT_PROVIDER: ProviderNeeds = {
  id: 'hubspot',
  requiredEnv: ['HUBSPOT_ACCESS_TOKEN'],
  optionalEnv: ['HUBSPOT_BASE_URL'],
  // An account's private apps share 100 requests per 10 s (Free, Starter) or 190 (Professional,
  // Enterprise), and its search endpoint takes 5 per second; a company row may cost two requests
  // (search, then create or update). 4 rows per second stays under all of them.
  rateLimit: { perSecond: 4, burst: 4 },
};

export interface HubSpotAccount {
  portalId: number;
  /** The app's host for this account's data centre (app.hubspot.com, app-eu1.hubspot.com). */
  uiDomain: string;
}

export interface HubSpot {
  /** Identifies the account's token (a hash), to scope what this process remembers per account. */
  scope: string;
  /** Sends JSON and answers the parsed body; throws a ProviderError (status 404 for a missing record). */
  send(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<unknown>;
  /** The account behind the token (for record links), asked once per token by this process. */
  account(): Promise<HubSpotAccount>;
}

const accounts = new Map<string, Promise<HubSpotAccount>>();

interface HubSpotErrorBody {
  message?: string;
  category?: string;
  policyName?: string;
  errors?: { message?: string; code?: string; category?: string }[];
}

/** HubSpot's message and error codes from an error body; a validation message embeds a JSON list naming each property. */
export function hubspotProblem(text: string): { message: string; codes: string[] } {
  let body: HubSpotErrorBody;
  try {
    body = JSON.parse(text) as HubSpotErrorBody;
  } catch {
    return { message: text.slice(0, 300), codes: [] };
  }
  const codes = [body.category, body.policyName, ...(body.errors ?? []).flatMap((e) => [e.code, e.category])].filter(
    (c): c is string => !!c,
  );
  let message = body.message ?? body.errors?.map((e) => e.message).join('; ') ?? text.slice(0, 300);
  const list = message.indexOf('[');
  if (list >= 0) {
    try {
      const items = JSON.parse(message.slice(list)) as { message?: string; error?: string }[];
      message = `${message.slice(0, list).trim()} ${items.map((i) => i.message).join('; ')}`;
      codes.push(...items.map((i) => i.error).filter((c): c is string => !!c));
    } catch {}
  }
  return { message: message.slice(0, 500), codes };
}

/** How long HubSpot's throttle asks us to wait: Retry-After, else its rate-limit headers; Infinity for the daily allowance. */
export function hubspotWait(res: SafeResponse): number | undefined {
  if (res.status !== 429) return undefined;
  const h = res.headers;
  if (h.get('x-hubspot-ratelimit-daily-remaining') === '0' || hubspotProblem(res.text()).codes.includes('DAILY'))
    return Number.POSITIVE_INFINITY;
  const given = retryAfterMs(res);
  if (given !== undefined) return given;
  if (h.get('x-hubspot-ratelimit-secondly-remaining') === '0') return 1000;
  const interval = Number(h.get('x-hubspot-ratelimit-interval-milliseconds'));
  return Number.isFinite(interval) && interval > 0 ? interval : 1000;
}

/** Codes of a 400 that concern the mapping, so every row: a property HubSpot does not have, or one it does not let us write. */
const CONFIG_CODES = new Set(['PROPERTY_DOESNT_EXIST', 'READ_ONLY_VALUE']);

function hubspotError(res: SafeResponse, token: string): ProviderError {
  const { message, codes } = hubspotProblem(redact(res.text(), [token]));
  const status = res.status;
  if (status === 401)
    return new ProviderError(
      `HubSpot refused HUBSPOT_ACCESS_TOKEN (HTTP 401: ${message}): set it to the access token of a private app (HubSpot → Settings → Integrations → Private apps)`,
      401,
      false,
    );
  if (status === 403)
    return new ProviderError(
      `HubSpot answered HTTP 403: ${message} The private app of HUBSPOT_ACCESS_TOKEN needs the scopes crm.objects.companies.read and .write, crm.objects.contacts.read and .write.`,
      403,
      false,
    );
  if (status === 429) {
    const wait = hubspotWait(res);
    const daily = wait === Number.POSITIVE_INFINITY;
    return new ProviderError(
      `HubSpot answered HTTP 429${daily ? ' (the daily API allowance is used up)' : ''}: ${message}`,
      429,
      true,
      daily ? undefined : wait,
    );
  }
  if (status === 400 && codes.some((c) => CONFIG_CODES.has(c)))
    return new ConfigRefused(`HubSpot refused the field mapping: ${message}`, 400);
  return new ProviderError(`HubSpot answered HTTP ${status}: ${message}`, status, status >= 500);
}

/** The client for this run; throws (naming HUBSPOT_ACCESS_TOKEN) when the token is missing. */
export function hubspot(ctx: PluginContext): HubSpot {
  const token = requireEnv(ctx, 'HUBSPOT_ACCESS_TOKEN');
  const base = (ctx.env('HUBSPOT_BASE_URL') || 'https://api.hubapi.com').replace(/\/+$/, '');
  const scope = createHash('sha256').update(`${base}\n${token}`).digest('hex').slice(0, 32);
  const send: HubSpot['send'] = async (method, path, body) => {
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const res = await sendPaced(ctx, `${base}${path}`, { method, headers, body, timeoutMs: 20_000 }, hubspotWait);
    if (res.status < 200 || res.status >= 300) throw hubspotError(res, token);
    try {
      return JSON.parse(res.text()) as unknown;
    } catch {
      throw new ProviderError(`HubSpot answered HTTP ${res.status} with a body that is not JSON`, res.status, false);
    }
  };
  const account = () => {
    let known = accounts.get(scope);
    if (!known) {
      known = (send('GET', '/account-info/v3/details') as Promise<{ portalId: number; uiDomain?: string }>).then((a) => ({
        portalId: a.portalId,
        uiDomain: a.uiDomain || 'app.hubspot.com',
      }));
      // A failure is not remembered: the next row asks again.
      known.catch(() => accounts.delete(scope));
      accounts.set(scope, known);
    }
    return known;
  };
  return { scope, send, account };
}
