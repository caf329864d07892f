import { createHash } from 'node:crypto';
import { type PluginContext, ProviderError, redact, type SafeResponse } from 'workflow-service/plugin-sdk';
import { retryAfterMs, sendPaced } from '../../_crm/pacing.ts';
import { ConfigRefused } from '../../_crm/sync-result.ts';
import { renew, type Session, session } from './salesforce-session.ts';

/**
 * Salesforce's REST API (/services/data/vXX.X on the org's instance URL): one JSON request at a
 * time, renewed once when the session expired (with the refresh-token flow), paced by throttle
 * answers, every failure a ProviderError in Salesforce's own words with the token taken out.
 */

/** Spring '25; any version from 46.0 answers an upsert's update with 200 and the record id. */
const API_VERSION = '63.0';

export interface Answer {
  status: number;
  /** The parsed body; null for 204. */
  data: unknown;
}

export interface Salesforce {
  /** Identifies the org (a hash of its instance URL), to scope what this process serialises per org. */
  scope: string;
  /** Sends JSON to /services/data/vXX.X{path}; answers 2xx and 300 (several matches), throws a ProviderError otherwise. */
  send(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<Answer>;
  /** The org's URL (a renewed session's may differ), for record links. */
  instanceUrl(): string;
}

/** Salesforce's errors are a JSON list of {errorCode, message}: "CODE: message; …", and the codes. */
export function salesforceProblem(text: string): { message: string; codes: string[] } {
  try {
    const body = JSON.parse(text) as { errorCode?: string; message?: string } | { errorCode?: string; message?: string }[];
    const items = Array.isArray(body) ? body : [body];
    const message = items.map((i) => [i.errorCode, i.message].filter(Boolean).join(': ')).join('; ');
    return { message: (message || text).slice(0, 500), codes: items.map((i) => i.errorCode).filter((c): c is string => !!c) };
  } catch {
    return { message: text.slice(0, 300), codes: [] };
  }
}

/**
 * How long a throttle asks us to wait: a 429's Retry-After (or 1 s); Infinity for REQUEST_LIMIT_EXCEEDED
 * (403), the org's 24-hour allowance or its concurrent long requests, which a row cannot wait out.
 */
export function salesforceWait(res: SafeResponse): number | undefined {
  if (res.status === 429) return retryAfterMs(res) ?? 1000;
  if (res.status === 403 && salesforceProblem(res.text()).codes.includes('REQUEST_LIMIT_EXCEEDED')) return Number.POSITIVE_INFINITY;
  return undefined;
}

/** Codes that concern the field mapping or the object, so every row. */
const CONFIG_CODES = new Set(['INVALID_FIELD', 'INVALID_FIELD_FOR_INSERT_UPDATE', 'INVALID_TYPE']);

function salesforceError(res: SafeResponse, token: string): ProviderError {
  const { message, codes } = salesforceProblem(redact(res.text(), [token]));
  const status = res.status;
  if (status === 401)
    return new ProviderError(
      `Salesforce refused the access token (HTTP 401: ${message}): set SALESFORCE_ACCESS_TOKEN to a current one, or SALESFORCE_REFRESH_TOKEN and SALESFORCE_CLIENT_ID to renew it`,
      401,
      false,
    );
  if (codes.includes('REQUEST_LIMIT_EXCEEDED'))
    return new ProviderError(`Salesforce's API request limit is reached (${message}): the rows are tried again later`, status, true);
  if (status === 429) return new ProviderError(`Salesforce answered HTTP 429: ${message}`, 429, true, retryAfterMs(res));
  if (codes.some((c) => CONFIG_CODES.has(c)) || (codes.includes('NOT_FOUND') && /external id/i.test(message)))
    return new ConfigRefused(`Salesforce refused the field mapping: ${message}`, status);
  if (status === 403)
    return new ProviderError(
      `Salesforce answered HTTP 403: ${message} (the user of the token needs API access and edit rights on the object)`,
      403,
      false,
    );
  return new ProviderError(`Salesforce answered HTTP ${status}: ${message}`, status, status >= 500);
}

/** The client for this run; throws (naming the variables) when there is no way to authenticate. */
export async function salesforce(ctx: PluginContext): Promise<Salesforce> {
  const auth = await session(ctx);
  let current: Session = auth.current;
  const version = (ctx.env('SALESFORCE_API_VERSION') || API_VERSION).replace(/^v/, '');
  const once = (s: Session, method: string, path: string, body: unknown) =>
    sendPaced(
      ctx,
      `${s.instanceUrl}/services/data/v${version}${path}`,
      { method, headers: { authorization: `Bearer ${s.accessToken}`, accept: 'application/json' }, body, timeoutMs: 20_000 },
      salesforceWait,
    );
  return {
    scope: createHash('sha256').update(current.instanceUrl).digest('hex').slice(0, 32),
    instanceUrl: () => current.instanceUrl,
    async send(method, path, body) {
      let res = await once(current, method, path, body);
      if (res.status === 401 && auth.renewal) {
        current = await renew(ctx, auth.renewal, current.accessToken);
        res = await once(current, method, path, body);
      }
      if ((res.status < 200 || res.status >= 300) && res.status !== 300) throw salesforceError(res, current.accessToken);
      const text = res.text();
      try {
        return { status: res.status, data: text ? (JSON.parse(text) as unknown) : null };
      } catch {
        throw new ProviderError(`Salesforce answered HTTP ${res.status} with a body that is not JSON`, res.status, false);
      }
    },
  };
}
