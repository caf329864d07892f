import { type CallLog, rollingWindow, serveLoopback } from '../../_crm/loopback.ts';

/**
 * A loopback HTTP server speaking the part of Salesforce's REST API that salesforce_sync uses, for
 * its tests: records kept in memory per object, fields checked against a small schema (required
 * fields, External ID fields, read-only ones), upsert by external ID, a SOQL subset (SELECT Id …
 * WHERE field IN (…)), bearer tokens that can expire, the OAuth refresh-token grant, a rolling rate
 * limit answering 429 with Retry-After, and the org's daily allowance (403 REQUEST_LIMIT_EXCEEDED).
 */

export interface FakeSObject {
  Id: string;
  fields: Record<string, unknown>;
}

export interface FakeSalesforceOptions {
  token: string;
  /** The refresh token the token endpoint accepts (with client id `client-id`). */
  refreshToken?: string;
  limit?: { max: number; windowMs: number };
  /** API requests left in the org's 24 hours; at 0, 403 REQUEST_LIMIT_EXCEEDED. */
  dailyLeft?: number;
}

export interface FakeSalesforce {
  url: string;
  records: Record<string, Map<string, FakeSObject>>;
  log: CallLog[];
  /** Tokens the org accepts; delete one to expire its session. */
  tokens: Set<string>;
  /** Adds a record as if made in Salesforce. */
  seed(object: string, fields: Record<string, unknown>): string;
  stop(): void;
}

interface Field {
  required?: boolean;
  externalId?: boolean;
  readOnly?: boolean;
}

const SCHEMA: Record<string, Record<string, Field>> = {
  Account: { Name: { required: true }, Website: {}, Industry: {}, NumberOfEmployees: {}, Domain__c: { externalId: true } },
  Contact: { FirstName: {}, LastName: { required: true }, Email: {}, Title: {}, Email__c: { externalId: true } },
  Lead: { FirstName: {}, LastName: { required: true }, Company: { required: true }, Email: {}, IsConverted: { readOnly: true } },
};
const PREFIX: Record<string, string> = { Account: '001', Contact: '003', Lead: '00Q' };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const errors = (status: number, errorCode: string, message: string, fields: string[] = []) =>
  json(status, [{ errorCode, message, fields }]);

function fieldProblem(object: string, values: Record<string, unknown>, creating: boolean): Response | null {
  const schema = SCHEMA[object] ?? {};
  for (const name of Object.keys(values)) {
    if (!schema[name]) return errors(400, 'INVALID_FIELD', `No such column '${name}' on sobject of type ${object}`);
    if (schema[name].readOnly) return errors(400, 'INVALID_FIELD_FOR_INSERT_UPDATE', `Unable to create/update fields: ${name}.`, [name]);
  }
  const missing = creating ? Object.keys(schema).filter((f) => schema[f]?.required && (values[f] ?? '') === '') : [];
  return missing.length ? errors(400, 'REQUIRED_FIELD_MISSING', `Required fields are missing: [${missing.join(', ')}]`, missing) : null;
}

const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/** The values of a SOQL `IN ('a', 'b\'c')` list. */
const literals = (list: string) => [...list.matchAll(/'((?:[^'\\]|\\.)*)'/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1'));

class Org {
  records: Record<string, Map<string, FakeSObject>> = { Account: new Map(), Contact: new Map(), Lead: new Map() };
  private next = 1;

  create(object: string, fields: Record<string, unknown>): string {
    const Id = `${PREFIX[object]}${String(this.next++).padStart(12, '0')}AAA`;
    this.records[object]?.set(Id, { Id, fields: { ...fields } });
    return Id;
  }

  matching(object: string, field: string, values: string[]): FakeSObject[] {
    return [...(this.records[object]?.values() ?? [])].filter((r) => values.some((v) => same(r.fields[field], v)));
  }

  /** GET /query?q=SELECT Id FROM X WHERE F IN (…) [AND IsConverted = false] ORDER BY CreatedDate LIMIT n */
  query(q: string): Response {
    const m = /^SELECT Id FROM (\w+) WHERE (\w+) IN \((.*)\)( AND IsConverted = false)? ORDER BY CreatedDate LIMIT (\d+)$/.exec(q);
    if (!m) return errors(400, 'MALFORMED_QUERY', `unexpected query: ${q}`);
    const [, object = '', field = '', list = '', unconverted, limit] = m;
    if (!SCHEMA[object]?.[field]) return errors(400, 'INVALID_FIELD', `No such column '${field}' on entity '${object}'`);
    const hits = this.matching(object, field, literals(list))
      .filter((r) => !unconverted || r.fields.IsConverted !== true)
      .slice(0, Number(limit));
    const records = hits.map((r) => ({ attributes: { type: object, url: `/services/data/v63.0/sobjects/${object}/${r.Id}` }, Id: r.Id }));
    return json(200, { totalSize: records.length, done: true, records });
  }

  /** PATCH /sobjects/{object}/{field}/{value}: upsert by an External ID field. */
  upsert(object: string, field: string, value: string, body: Record<string, unknown>): Response {
    if (!SCHEMA[object]?.[field]?.externalId)
      return errors(404, 'NOT_FOUND', `Provided external ID field does not exist or is not accessible: ${field}`);
    const found = this.matching(object, field, [value]);
    if (found.length > 1)
      return json(
        300,
        found.map((r) => `/services/data/v63.0/sobjects/${object}/${r.Id}`),
      );
    const existing = found[0];
    const problem = fieldProblem(object, body, !existing);
    if (problem) return problem;
    if (existing) {
      Object.assign(existing.fields, body);
      return json(200, { id: existing.Id, success: true, errors: [], created: false });
    }
    return json(201, { id: this.create(object, { ...body, [field]: value }), success: true, errors: [], created: true });
  }

  route(method: string, path: string, query: URLSearchParams, body: Record<string, unknown>): Response {
    const m = /^\/services\/data\/v\d+\.\d\/(query|sobjects\/(\w+)(?:\/(\w+))?(?:\/([^/]+))?)\/?$/.exec(path);
    const [, kind, object = '', a, b] = m ?? [];
    if (m && method === 'GET' && kind === 'query') return this.query(query.get('q') ?? '');
    if (!m || !SCHEMA[object]) return errors(404, 'NOT_FOUND', 'The requested resource does not exist');
    if (method === 'PATCH' && a && b) return this.upsert(object, a, decodeURIComponent(b), body);
    if (method === 'POST' && !a)
      return fieldProblem(object, body, true) ?? json(201, { id: this.create(object, body), success: true, errors: [] });
    const record = a ? this.records[object]?.get(a) : undefined;
    if (method !== 'PATCH' || !record) return errors(404, 'NOT_FOUND', 'The requested resource does not exist');
    const problem = fieldProblem(object, body, false);
    if (problem) return problem;
    Object.assign(record.fields, body);
    return new Response(null, { status: 204 });
  }
}

/** POST /services/oauth2/token, grant_type=refresh_token. */
function tokenGrant(form: URLSearchParams, options: FakeSalesforceOptions, tokens: Set<string>, url: string): Response {
  if (
    form.get('grant_type') !== 'refresh_token' ||
    form.get('client_id') !== 'client-id' ||
    form.get('refresh_token') !== options.refreshToken
  )
    return json(400, { error: 'invalid_grant', error_description: 'expired access/refresh token' });
  const token = `00D-renewed-${crypto.randomUUID()}`;
  tokens.add(token);
  return json(200, {
    access_token: token,
    instance_url: url,
    token_type: 'Bearer',
    issued_at: String(Date.now()),
    scope: 'api refresh_token',
  });
}

export function startFakeSalesforce(options: FakeSalesforceOptions): FakeSalesforce {
  const org = new Org();
  const tokens = new Set([options.token]);
  const window = options.limit ? rollingWindow(options.limit) : null;
  let dailyLeft = options.dailyLeft ?? Number.POSITIVE_INFINITY;
  let self = '';
  const server = serveLoopback((req, url, text) => {
    if (url.pathname === '/services/oauth2/token') return tokenGrant(new URLSearchParams(text), options, tokens, self);
    const auth = req.headers.get('authorization') ?? '';
    // Some APIs echo the credential they refused; the tool must not pass it on.
    if (!tokens.has(auth.replace(/^Bearer /, ''))) return errors(401, 'INVALID_SESSION_ID', `Session expired or invalid: ${auth}`);
    const waitMs = window?.take() ?? 0;
    if (waitMs > 0)
      return json(429, [{ errorCode: 'TOO_MANY_REQUESTS', message: 'Too many requests' }], {
        'Retry-After': String(Math.ceil(waitMs / 1000)),
      });
    if (dailyLeft-- <= 0) return errors(403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    return org.route(req.method, url.pathname, url.searchParams, (text ? JSON.parse(text) : {}) as Record<string, unknown>);
  });
  self = server.url;
  return { ...server, records: org.records, tokens, seed: (object, fields) => org.create(object, fields) };
}
