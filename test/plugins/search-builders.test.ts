import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type FakeServer, startFakeServer } from '../support/fake-providers.ts';
import { DIALECTS } from '../support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from '../support/test-service.ts';
import { setEnv } from './enrich-helpers.ts';

/**
 * The provider-backed builders in live mode against local servers that speak the providers' APIs:
 * Google Places Text Search (page tokens) and Apollo-compatible people/company search (pages).
 */
const person = (i: number) => ({
  first_name: `First${i}`,
  last_name: `Last${i}`,
  name: `First${i} Last${i}`,
  title: 'CTO',
  city: 'Lyon',
  country: 'France',
  organization: { name: `Org ${i}`, primary_domain: `org${i}.example.com` },
});
const org = (i: number) => ({
  name: `Org ${i}`,
  primary_domain: `org${i}.example.com`,
  industry: 'Software',
  estimated_num_employees: 10 * i,
  founded_year: 2000 + (i % 20),
});

let places: FakeServer;
let apollo: FakeServer;
let restore: () => void;

beforeAll(() => {
  // 45 places, 20 per page, chained by nextPageToken.
  places = startFakeServer({
    'POST /v1/places:searchText': (req) => {
      const start = req.body.pageToken ? Number(req.body.pageToken) : 0;
      const size = Math.min(20, Number(req.body.pageSize ?? 20));
      const end = Math.min(45, start + size);
      const list = Array.from({ length: end - start }, (_, k) => ({
        displayName: { text: `Place ${start + k + 1}` },
        websiteUri: `https://p${start + k + 1}.example.com`,
        rating: 4.5,
      }));
      return Response.json({ places: list, ...(end < 45 ? { nextPageToken: String(end) } : {}) });
    },
  });
  // 250 people / 250 companies, in pages of `per_page`.
  const paged = (items: (i: number) => unknown, key: string) => (req: { body: any }) => {
    const perPage = Number(req.body.per_page);
    const page = Number(req.body.page);
    const all = 250;
    const start = (page - 1) * perPage;
    const list = Array.from({ length: Math.max(0, Math.min(perPage, all - start)) }, (_, k) => items(start + k + 1));
    return Response.json({
      [key]: list,
      pagination: { page, per_page: perPage, total_entries: all, total_pages: Math.ceil(all / perPage) },
    });
  };
  apollo = startFakeServer({
    'POST /api/v1/mixed_people/search': paged(person, 'people'),
    'POST /api/v1/mixed_companies/search': paged(org, 'organizations'),
  });
  restore = setEnv({
    GOOGLE_MAPS_API_KEY: 'maps-key',
    GOOGLE_MAPS_BASE_URL: places.url,
    APOLLO_API_KEY: 'apollo-key',
    APOLLO_BASE_URL: apollo.url,
    ALLOW_PRIVATE_NETWORK: '1',
  });
});

afterAll(() => {
  restore();
  places.stop();
  apollo.stop();
});

describe.each(DIALECTS)('search builders, live mode, on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PROVIDER_MODE: 'live', JOB_BACKOFF_MS: '20', JOB_MAX_ATTEMPTS: '3' });
  });
  afterAll(() => t.stop());
  const build = async (builder_id: string, form_data: unknown) => {
    const r = await t.api('POST', '/projects', { body: { builder_id, form_data } });
    expect(r.status).toBe(201);
    return waitForBuilder(t, r.body.project_id);
  };

  test('Google Maps pages through Text Search with the page token up to max_results', async () => {
    places.requests.length = 0;
    const p = await build('google_maps_search', { query: 'bakeries in Lyon', max_results: 30 });
    expect(p.builder_status.type).toBe('completed');
    expect(p.row_count).toBe(30);
    const sent = places.requestsTo('/v1/places:searchText');
    expect(sent.map((r) => [r.body.textQuery, r.body.pageSize, r.body.pageToken ?? null])).toEqual([
      ['bakeries in Lyon', 20, null],
      ['bakeries in Lyon', 10, '20'],
    ]);
    expect(sent[0]?.headers.get('x-goog-api-key')).toBe('maps-key');
    expect(sent[0]?.headers.get('x-goog-fieldmask')).toContain('places.displayName');
  });

  test('Google Maps stops at the last page when there are fewer places than asked', async () => {
    const p = await build('google_maps_search', { query: 'all', max_results: 100 });
    expect(p.row_count).toBe(45);
    expect(p.lead_gen_execution_log.filter((e: any) => e.step === 'page').map((e: any) => e.rows)).toEqual([20, 20, 5]);
  });

  test('people search sends only the filters that are set, pages by 100, and maps the people to rows', async () => {
    apollo.requests.length = 0;
    const p = await build('people_search_builder', {
      filters: {
        person_titles: ['CTO'],
        include_similar_titles: false,
        person_locations: [],
        q_keywords: '',
        revenue_range: {},
        organization_num_employees_ranges: ['11,50'],
      },
      max_results: 150,
    });
    expect(p.row_count).toBe(150);
    const sent = apollo.requestsTo('/api/v1/mixed_people/search');
    expect(sent.map((r) => [r.body.page, r.body.per_page])).toEqual([
      [1, 100],
      [2, 100],
    ]);
    const { page, per_page, ...filters } = sent[0]?.body ?? {};
    expect(filters).toEqual({ person_titles: ['CTO'], include_similar_titles: false, organization_num_employees_ranges: ['11,50'] });
    expect(sent[0]?.headers.get('x-api-key')).toBe('apollo-key');
    expect(p.first_company_data).toMatchObject({
      'First Name': 'First1',
      'Full Name': 'First1 Last1',
      Title: 'CTO',
      Location: 'Lyon, France',
      Company: 'Org 1',
      'Company Domain': 'org1.example.com',
    });
  });

  test('company search maps organizations, with publicly_traded and ranges passed as given', async () => {
    apollo.requests.length = 0;
    const p = await build('companies_search_builder', {
      filters: { q_organization_name: 'Org', publicly_traded: true, revenue_range: { min: 1, max: 5 } },
      max_results: 5,
    });
    expect(p.row_count).toBe(5);
    const body = apollo.requestsTo('/api/v1/mixed_companies/search')[0]?.body;
    expect(body).toMatchObject({
      q_organization_name: 'Org',
      publicly_traded: true,
      revenue_range: { min: 1, max: 5 },
      page: 1,
      per_page: 5,
    });
    expect(p.first_company_data).toMatchObject({
      Name: 'Org 1',
      Domain: 'org1.example.com',
      Industry: 'Software',
      Employees: 10,
      'Founded Year': 2001,
    });
  });

  test('a 429 from the provider is retried and the run completes', async () => {
    apollo.failNext('/api/v1/mixed_companies/search', 429, 1);
    const p = await build('companies_search_builder', { filters: {}, max_results: 3 });
    expect(p.builder_status.type).toBe('completed');
    expect(p.row_count).toBe(3);
    expect(p.lead_gen_execution_log.map((e: any) => e.step)).toContain('retry');
  });

  test('a provider that keeps failing ends the run failed with the provider’s answer', async () => {
    apollo.failNext('/api/v1/mixed_companies/search', 500, 10, 'upstream exploded');
    const p = await build('companies_search_builder', { filters: {}, max_results: 3 });
    apollo.clearFailures();
    expect(p.builder_status.type).toBe('failed');
    expect(p.builder_status.error_message).toContain('HTTP 500');
    expect(p.row_count).toBe(0);
  });

  test('live mode without the key fails the run naming the variable', async () => {
    const back = setEnv({ APOLLO_API_KEY: undefined });
    try {
      const p = await build('people_search_builder', { filters: {}, max_results: 3 });
      expect(p.builder_status.type).toBe('failed');
      expect(p.builder_status.error_message).toContain('APOLLO_API_KEY');
    } finally {
      back();
    }
  });
});
