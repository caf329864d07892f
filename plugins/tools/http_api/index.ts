import {
  defineTool,
  type EnrichResult,
  jsonataProblems,
  providerRequest,
  redact,
  rowFailure,
  type Static,
  statusError,
  type ToolContext,
  Type,
} from 'workflow-service/plugin-sdk';
import { ExtractError, extract } from './extract.ts';

const Input = Type.Object(
  {
    method: Type.Optional(
      Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH'), Type.Literal('DELETE')], {
        description: 'Default GET.',
      }),
    ),
    url: Type.String({
      minLength: 1,
      maxLength: 4000,
      pattern: '^([hH][tT][tT][pP][sS]?://|\\{\\{)',
      description: 'http(s) URL; templates are inserted as they are, so put row values that need escaping in `query`.',
    }),
    query: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        description: 'Query parameters, URL-encoded and appended to the URL; empty values are left out.',
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" }), Type.String(), {
        additionalProperties: false,
        description: 'Request headers, e.g. {"Authorization": "Bearer …"}.',
      }),
    ),
    body: Type.Optional(
      Type.Unknown({
        description: 'Request body: a JSON value (sent as application/json) or a string (sent as it is). Not sent with GET.',
      }),
    ),
    extract: Type.Optional(
      Type.String({
        maxLength: 4000,
        description:
          'JSONata expression picking the value out of the parsed response body, e.g. "data.name"; $status and $headers are bound. Default: the whole body.',
      }),
    ),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 30_000, description: 'Time limit of the request (default 15000).' })),
  },
  { additionalProperties: false },
);

type Config = Static<typeof Input>;

const MAX_BYTES = 5 * 1024 * 1024;

/** The URL with `query` appended, or null when it is not an http(s) URL. */
function requestUrl(c: Config): URL | null {
  let url: URL;
  try {
    url = new URL(String(c.url).trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  for (const [k, v] of Object.entries(c.query ?? {})) if (v !== null && v !== '') url.searchParams.append(k, String(v));
  return url;
}

function parseBody(text: string, contentType: string): unknown {
  if (/json/i.test(contentType) || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {}
  }
  return text;
}

const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);

async function call(ctx: ToolContext, c: Config): Promise<EnrichResult> {
  const url = requestUrl(c);
  if (!url) return { status: 'error', error: 'url is not an http(s) URL once the row is filled in', retryable: false };
  const method = c.method ?? 'GET';
  const headers = Object.fromEntries(Object.entries(c.headers ?? {}).map(([k, v]) => [k, String(v)]));
  const secrets = Object.values(headers);
  let body: unknown;
  if (method !== 'GET' && c.body !== undefined && c.body !== null) {
    body = c.body;
    if (typeof body === 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'text/plain; charset=utf-8';
  }
  try {
    const res = await providerRequest(ctx, url.href, { method, headers, body, timeoutMs: c.timeout_ms ?? 15_000, maxBytes: MAX_BYTES });
    if (res.status < 200 || res.status >= 300) throw statusError(res, secrets);
    const responseHeaders: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      responseHeaders[k.toLowerCase()] = v;
    });
    const value = await extract(
      ctx.expressions,
      c.extract,
      parseBody(res.text(), res.headers.get('content-type') ?? ''),
      res.status,
      responseHeaders,
    );
    return isEmpty(value)
      ? { status: 'no_result', reason: c.extract ? 'extract found nothing' : 'empty response' }
      : { status: 'ok', value };
  } catch (e) {
    if (e instanceof ExtractError) return { status: 'error', error: redact(e.message, secrets), retryable: false };
    return rowFailure(e);
  }
}

/** Sandbox: nothing is sent; the "response" echoes the request (without header values, which may be keys). */
async function sandboxCall(ctx: ToolContext, c: Config): Promise<EnrichResult> {
  const url = requestUrl(c);
  if (!url) return { status: 'error', error: 'url is not an http(s) URL once the row is filled in', retryable: false };
  const echo = {
    sandbox: true,
    request: { method: c.method ?? 'GET', url: url.href, headers: Object.keys(c.headers ?? {}), body: c.body ?? null },
  };
  try {
    const value = await extract(ctx.expressions, c.extract, echo, 200, { 'content-type': 'application/json' });
    return isEmpty(value)
      ? { status: 'no_result', reason: 'sandbox mode: the request was not sent, and extract found nothing in its echo' }
      : { status: 'ok', value };
  } catch (e) {
    if (e instanceof ExtractError) return { status: 'error', error: e.message, retryable: false };
    throw e;
  }
}

export default defineTool({
  kind: 'tool',
  id: 'http_api',
  version: '1.0.0',
  // enrichOne and concurrency came with SDK 1.1.
  sdk: '^1.1',
  name: 'HTTP API call',
  summary: 'Calls a web address of your choice for each row and keeps what it answers.',
  description:
    'Calls any HTTP API once per row and keeps the part of the answer you pick with a JSONata expression. Every string of the config may hold {{Column}} templates, e.g. {"method": "GET", "url": "https://api.example.com/companies", "query": {"domain": "{{Domain}}"}, "headers": {"Authorization": "Bearer …"}, "extract": "data.employees"}. 404 → no result; 429/5xx → retried later; other 4xx → that row’s error. Private and loopback addresses are refused. Free (you pay your API, not us).',
  category: 'integration',
  tags: ['http', 'api', 'webhook', 'rest', 'json', 'jsonata', 'custom', 'request'],
  legacyIds: [],
  input: Input,
  requires: ['url'],
  produces: [{ field: 'value', description: 'What `extract` picked from the response (the whole body by default).' }],
  cost: { credits: 0, per: 'attempt' },
  batchSize: 10,
  checkConfig: (c) => jsonataProblems('extract', c.extract),
  concurrency: 5,
  enrichOne: (item, ctx) => (ctx.providerMode === 'sandbox' ? sandboxCall(ctx, item.config) : call(ctx, item.config)),
});
