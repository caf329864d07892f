import { type CallLog, rollingWindow, serveLoopback } from '../../_crm/loopback.ts';

/**
 * A loopback HTTP server speaking the part of HubSpot's CRM v3 API that hubspot_sync uses, for its
 * tests: records kept in memory, unique properties enforced (contacts' email, custom unique company
 * properties), properties checked against a known list, a bearer token, a rolling rate limit that
 * answers 429 as HubSpot does, and a search index that may lag behind writes.
 */

export interface FakeRecord {
  id: string;
  properties: Record<string, string>;
  createdAt: number;
}

export interface FakeHubSpotOptions {
  token: string;
  /** Requests allowed per window; beyond, 429 with X-HubSpot-RateLimit-* headers (and Retry-After unless `retryAfter: false`). */
  limit?: { max: number; windowMs: number; retryAfter?: boolean };
  /** Records created this recently are not found by search yet, as in HubSpot's search index. */
  searchLagMs?: number;
}

export interface FakeHubSpot {
  url: string;
  /** Records by object type ("companies", "contacts"), by id. */
  records: Record<string, Map<string, FakeRecord>>;
  log: CallLog[];
  stop(): void;
}

interface Filter {
  propertyName: string;
  operator: string;
  value?: string;
  values?: string[];
}

/** The request bodies of the routes below, in one shape. */
interface Body {
  inputs?: { idProperty?: string; id?: string; properties?: Record<string, string> }[];
  filterGroups?: { filters?: Filter[] }[];
  properties?: Record<string, string>;
}

const PROPERTIES: Record<string, string[]> = {
  companies: ['name', 'domain', 'industry', 'numberofemployees', 'city', 'description', 'wfs_domain'],
  contacts: ['email', 'firstname', 'lastname', 'jobtitle', 'company', 'phone'],
};
const UNIQUE: Record<string, string[]> = { companies: ['wfs_domain'], contacts: ['email'] };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const problem = (status: number, message: string, category: string) =>
  json(status, { status: 'error', message, correlationId: crypto.randomUUID(), category });

/** HubSpot's answer to property values it refuses: a validation message embedding a JSON list. */
const invalid = (list: { message: string; error: string; name: string }[]) =>
  problem(400, `Property values were not valid: ${JSON.stringify(list.map((i) => ({ isValid: false, ...i })))}`, 'VALIDATION_ERROR');

function refused(object: string, properties: Record<string, string>): Response | null {
  const bad = Object.keys(properties).filter((p) => !PROPERTIES[object]?.includes(p));
  if (bad.length)
    return invalid(bad.map((name) => ({ message: `Property "${name}" does not exist`, error: 'PROPERTY_DOESNT_EXIST', name })));
  const email = properties.email;
  if (object === 'contacts' && email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))
    return invalid([{ message: `Email address ${email} is invalid`, error: 'INVALID_EMAIL', name: 'email' }]);
  return null;
}

class Store {
  records: Record<string, Map<string, FakeRecord>> = { companies: new Map(), contacts: new Map() };
  private nextId = 1000;
  constructor(private searchLagMs: number) {}

  find(object: string, property: string, value: string): FakeRecord | undefined {
    return [...(this.records[object]?.values() ?? [])].find((r) => r.properties[property]?.toLowerCase() === value.toLowerCase());
  }

  create(object: string, properties: Record<string, string>): FakeRecord {
    const record = { id: String(this.nextId++), properties: { ...properties }, createdAt: Date.now() };
    this.records[object]?.set(record.id, record);
    return record;
  }

  /** POST /crm/v3/objects/{type}/batch/upsert: by a unique idProperty only. */
  upsert(object: string, body: Body): Response {
    const results = [];
    for (const input of body.inputs ?? []) {
      const idProperty = input.idProperty ?? 'hs_object_id';
      if (!UNIQUE[object]?.includes(idProperty))
        return problem(400, `${idProperty} is not a unique identifier property of ${object}`, 'VALIDATION_ERROR');
      const properties = input.properties ?? {};
      const no = refused(object, { ...properties, [idProperty]: input.id ?? '' });
      if (no) return no;
      const existing = this.find(object, idProperty, input.id ?? '');
      const record = existing ?? this.create(object, { [idProperty]: input.id ?? '' });
      Object.assign(record.properties, properties);
      results.push({ id: record.id, properties: record.properties, new: !existing, archived: false });
    }
    return json(200, { status: 'COMPLETE', results, startedAt: new Date().toISOString(), completedAt: new Date().toISOString() });
  }

  /** POST /crm/v3/objects/{type}/search: EQ and IN filters of the first group, over records the index has caught up with. */
  search(object: string, body: Body): Response {
    const filters = body.filterGroups?.[0]?.filters ?? [];
    const visible = [...(this.records[object]?.values() ?? [])].filter((r) => Date.now() - r.createdAt >= this.searchLagMs);
    const hits = visible.filter((r) =>
      filters.every((f) => {
        const have = r.properties[f.propertyName]?.toLowerCase();
        const want = (f.operator === 'IN' ? (f.values ?? []) : [f.value ?? '']).map((v) => v.toLowerCase());
        return have !== undefined && want.includes(have);
      }),
    );
    return json(200, { total: hits.length, results: hits.map((r) => ({ id: r.id, properties: r.properties })) });
  }

  /** POST /crm/v3/objects/{type}: a unique property already taken is a 409, as in HubSpot. */
  createOne(object: string, body: Body): Response {
    const properties = body.properties ?? {};
    const clash = UNIQUE[object]?.map((p) => properties[p] && this.find(object, p, properties[p])).find(Boolean);
    if (clash) return problem(409, `Object already exists. Existing ID: ${clash.id}`, 'CONFLICT');
    return refused(object, properties) ?? json(201, { ...this.create(object, properties), archived: false });
  }

  route(method: string, path: string, body: Body): Response {
    if (method === 'GET' && path === '/account-info/v3/details')
      return json(200, { portalId: 4242, uiDomain: 'app-eu1.hubspot.com', dataHostingLocation: 'eu1', timeZone: 'Europe/Paris' });
    const m = /^\/crm\/v3\/objects\/(companies|contacts)(?:\/(batch\/upsert|search|\d+))?$/.exec(path);
    const [, object = '', rest] = m ?? [];
    if (m && method === 'POST' && rest === 'batch/upsert') return this.upsert(object, body);
    if (m && method === 'POST' && rest === 'search') return this.search(object, body);
    if (m && method === 'POST' && rest === undefined) return this.createOne(object, body);
    const record = rest ? this.records[object]?.get(rest) : undefined;
    if (method !== 'PATCH' || !record) return problem(404, `resource not found: ${method} ${path}`, 'OBJECT_NOT_FOUND');
    const no = refused(object, body.properties ?? {});
    if (no) return no;
    Object.assign(record.properties, body.properties ?? {});
    return json(200, { ...record, archived: false });
  }
}

/** HubSpot's 429: its rate-limit headers, Retry-After, and the policy it hit. */
function throttle(limit: NonNullable<FakeHubSpotOptions['limit']>, waitMs: number): Response {
  const headers: Record<string, string> = {
    'X-HubSpot-RateLimit-Interval-Milliseconds': String(limit.windowMs),
    'X-HubSpot-RateLimit-Max': String(limit.max),
    'X-HubSpot-RateLimit-Remaining': '0',
    ...(limit.retryAfter === false ? {} : { 'Retry-After': String(Math.ceil(waitMs / 1000)) }),
  };
  const body = {
    status: 'error',
    message: 'You have reached your ten_secondly_rolling limit.',
    errorType: 'RATE_LIMIT',
    correlationId: crypto.randomUUID(),
    policyName: 'TEN_SECONDLY_ROLLING',
  };
  return json(429, body, headers);
}

export function startFakeHubSpot(options: FakeHubSpotOptions): FakeHubSpot {
  const store = new Store(options.searchLagMs ?? 0);
  const window = options.limit ? rollingWindow(options.limit) : null;
  const server = serveLoopback((req, url, text) => {
    const auth = req.headers.get('authorization') ?? '';
    // Some APIs echo the credential they refused; the tool must not pass it on.
    if (auth !== `Bearer ${options.token}`)
      return problem(401, `Authentication credentials not found or invalid: ${auth}`, 'INVALID_AUTHENTICATION');
    const waitMs = window?.take() ?? 0;
    if (waitMs > 0 && options.limit) return throttle(options.limit, waitMs);
    return store.route(req.method, url.pathname, (text ? JSON.parse(text) : {}) as Body);
  });
  return { ...server, records: store.records };
}
