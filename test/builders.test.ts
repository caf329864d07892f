import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { closeGate, openGate } from './fixtures/plugins/builders/gate_builder/index.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

const FIXTURE_PLUGINS = resolve(import.meta.dir, 'fixtures/plugins');

describe('GET /project-builders (catalog)', () => {
  let t: TestService;
  let catalog: any[];
  beforeAll(async () => {
    t = await startTestService('sqlite');
    const r = await t.api('GET', '/project-builders');
    expect(r.status).toBe(200);
    catalog = r.body;
  });
  afterAll(() => t.stop());
  const item = (id: string) => catalog.find((b) => b.builder_id === id);

  test('is a bare array listing every required builder by public slug', () => {
    expect(Array.isArray(catalog)).toBe(true);
    const ids = catalog.map((b) => b.builder_id);
    for (const id of [
      'google_maps_search',
      'people_search_builder',
      'companies_search_builder',
      'manual_list_builder',
      'csv_import_builder',
    ]) {
      expect(ids).toContain(id);
    }
    expect(ids).not.toContain('google_map_builder'); // legacy ids are accepted, not listed
  });

  test('the Google Maps template has empty string fields', () => {
    expect(item('google_maps_search').form_data).toEqual({ query: '', max_results: '' });
  });

  test('the two search builders nest typed empty placeholders under filters', () => {
    for (const id of ['people_search_builder', 'companies_search_builder']) {
      const form = item(id).form_data;
      expect(Object.keys(form).sort()).toEqual(['filters', 'max_results']);
      expect(form.max_results).toBe('');
      expect(form.filters.revenue_range).toEqual({});
      expect(form.filters.organization_locations).toEqual([]);
      expect(form.filters).not.toHaveProperty('include_similar_titles');
    }
    const people = item('people_search_builder').form_data.filters;
    expect(people.person_titles).toEqual([]);
    expect(people.q_keywords).toBe('');
    const companies = item('companies_search_builder').form_data.filters;
    expect(companies.publicly_traded).toBe('');
    expect(companies.q_organization_name).toBe('');
    expect(companies.founded_year_min).toBe('');
    expect(companies.latest_funding_amount_range).toEqual({});
  });

  test('manual list and CSV import templates', () => {
    expect(item('manual_list_builder').form_data).toEqual({ companies: '' });
    expect(item('csv_import_builder').form_data).toEqual({ csv_text: '', upload_id: '' });
  });

  test('each item shows its row limit, and the CSV form says what happens past it', () => {
    expect(item('csv_import_builder').max_rows).toBe(1_000_000);
    expect(item('manual_list_builder').max_rows).toBe(10_000);
    for (const b of catalog) expect(b.max_rows).toBeGreaterThan(0);
    expect(item('csv_import_builder').schema.properties.csv_text.description).toContain('At most 1,000,000 data rows');
  });

  test('each item also carries a name, a description, its cost and its JSON Schema', () => {
    for (const b of catalog) {
      expect(b.name.length).toBeGreaterThan(0);
      expect(b.description.length).toBeGreaterThan(20);
      expect(typeof b.cost.credits).toBe('number');
      expect(b.schema.type).toBe('object');
    }
  });
});

describe.each(DIALECTS)('builders run after creation on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS });
  });
  afterAll(() => t.stop());

  const create = (builder_id: string, form_data: unknown, name?: string) =>
    t.api('POST', '/projects', { body: { builder_id, form_data, ...(name ? { name } : {}) } });

  test('creation answers 201 with the project id before the builder has run', async () => {
    closeGate();
    const r = await create('gate_builder', { count: 3 });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['project_id']);
    const before = await t.api('GET', `/projects/${r.body.project_id}`);
    expect(['queued', 'running']).toContain(before.body.builder_status.type);
    expect(before.body.row_count).toBe(0);
    openGate();
    const after = await waitForBuilder(t, r.body.project_id);
    expect(after.builder_status).toEqual({ type: 'completed', error_message: null });
    expect(after.row_count).toBe(3);
  });

  test('a plugin dropped in through PLUGINS_DIR appears in the catalog', async () => {
    const r = await t.api('GET', '/project-builders');
    expect(r.body.map((b: any) => b.builder_id)).toContain('gate_builder');
  });

  test('the legacy id google_map_builder creates a Google Maps project', async () => {
    const r = await create('google_map_builder', { query: 'dentists in Lyon', max_results: 25 });
    expect(r.status).toBe(201);
    const p = await waitForBuilder(t, r.body.project_id);
    expect(p.builder_id).toBe('google_maps_search');
    expect(p.builder_status.type).toBe('completed');
    expect(p.row_count).toBe(25);
    expect(p.columns.map((c: any) => c.name)).toEqual([
      'Name',
      'Address',
      'Phone',
      'Website',
      'Rating',
      'Reviews',
      'Category',
      'Google Maps URL',
    ]);
    expect(String(p.first_company_data.Website)).toContain('.example.com');
  });

  test('a builder project carries its execution log: start, each page with its rows, the end', async () => {
    const r = await create('google_maps_search', { query: 'bakeries in Porto', max_results: 45 });
    const p = await waitForBuilder(t, r.body.project_id);
    const steps = p.lead_gen_execution_log.map((e: any) => [e.step, e.rows ?? e.total_rows ?? null]);
    expect(steps).toEqual([
      ['started', null],
      ['page', 20],
      ['page', 20],
      ['page', 5],
      ['completed', 45],
    ]);
    for (const e of p.lead_gen_execution_log) expect(new Date(e.at).toISOString()).toBe(e.at);
  });

  test('manual list: domain-like lines fill Domain, other lines fill Name', async () => {
    const r = await create('manual_list_builder', {
      companies: 'Acme Inc\nhttps://www.Example.org/about\n\n  stripe.com  \nBäckerei Müller',
    });
    expect(r.status).toBe(201);
    await waitForBuilder(t, r.body.project_id);
    const rows = await t.api('GET', `/projects/${r.body.project_id}/rows`);
    expect(rows.body.total_rows).toBe(4);
    const pairs = rows.body.rows.map((row: any) => [row.company.Name.value, row.company.Domain.value]);
    expect(pairs).toEqual([
      ['Acme Inc', null],
      [null, 'example.org'],
      [null, 'stripe.com'],
      ['Bäckerei Müller', null],
    ]);
  });

  test('CSV import: one input column per header, quoted commas and newlines, BOM ignored', async () => {
    const csv = '\uFEFFName,Domain,Notes\n"Acme, Inc",acme.example.com,"line one\nline two"\nGlobex,globex.example.com,\n';
    const r = await create('csv_import_builder', { csv_text: csv }, 'My CSV');
    expect(r.status).toBe(201);
    const p = await waitForBuilder(t, r.body.project_id);
    expect(p.name).toBe('My CSV');
    expect(p.columns.map((c: any) => [c.name, c.required, c.type])).toEqual([
      ['Name', true, 'input'],
      ['Domain', true, 'input'],
      ['Notes', true, 'input'],
    ]);
    const rows = await t.api('GET', `/projects/${r.body.project_id}/rows`);
    expect(rows.body.rows[0].company.Name.value).toBe('Acme, Inc');
    expect(rows.body.rows[0].company.Notes.value).toBe('line one\nline two');
    expect(rows.body.rows[1].company.Notes).toEqual({ name: 'Notes', value: null, status: 'default', is_loading: false });
  });

  test('live mode without a provider key fails the run with a message naming the env var', async () => {
    const live = await startTestService(dialect, { PROVIDER_MODE: 'live', GOOGLE_MAPS_API_KEY: '' });
    try {
      delete process.env.GOOGLE_MAPS_API_KEY;
      const r = await live.api('POST', '/projects', {
        body: { builder_id: 'google_maps_search', form_data: { query: 'x', max_results: 1 } },
      });
      expect(r.status).toBe(201);
      const p = await waitForBuilder(live, r.body.project_id);
      expect(p.builder_status.type).toBe('failed');
      expect(p.builder_status.error_message).toContain('GOOGLE_MAPS_API_KEY');
    } finally {
      await live.stop();
    }
  });
});
