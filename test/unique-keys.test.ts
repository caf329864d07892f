import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { keyValue } from '../core/rows/unique-key.ts';
import { closeGate, openGate } from './fixtures/plugins/builders/gate_builder/index.ts';
import { call, connect } from './mcp/mcp-support.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

describe('keyValue', () => {
  test('one company whatever the spelling of its web address; emails and text compared as people mean them', () => {
    for (const same of ['ACME.com', 'https://www.acme.com/', 'acme.com?utm_source=x', ' http://ACME.COM ', 'https://acme.com#top'])
      expect(keyValue(same)).toBe('acme.com');
    // A path names something of its own: two LinkedIn profiles are two people, not one linkedin.com.
    expect(keyValue('https://www.linkedin.com/in/Jane-Doe/')).toBe('linkedin.com/in/jane-doe');
    expect(keyValue('linkedin.com/in/jane-doe')).toBe(keyValue('https://linkedin.com/in/JANE-DOE?trk=x'));
    expect(keyValue('linkedin.com/in/john-smith')).not.toBe(keyValue('linkedin.com/in/jane-doe'));
    expect(keyValue('acme.com/about')).not.toBe(keyValue('acme.com'));
    expect(keyValue('shop.acme.com')).toBe('shop.acme.com'); // another site
    expect(keyValue('x.myshopify.com')).not.toBe(keyValue('y.myshopify.com')); // shops of one platform stay apart
    expect(keyValue('Jane.Doe@Example.COM')).toBe('jane.doe@example.com');
    expect(keyValue('  Acme   Inc. ')).toBe(keyValue('ACME INC.'));
    expect(keyValue('')).toBeNull();
    expect(keyValue(null)).toBeNull();
    expect(keyValue(42)).toBe('42');
  });
});

/** Unique keys (docs/enrichment.md): unique_columns on a project; inserts of an existing key answer the existing row. */
describe.each(DIALECTS)('unique keys on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect, { MCP_PORT: '0', PLUGINS_DIR: resolve(import.meta.dir, 'fixtures/plugins') });
  });
  afterAll(() => t.stop());

  /** A project with Name, Website and Email input columns (and the rows of `csv`, when given). */
  async function project(csv = 'Name,Website,Email\nSeed,seed.example,') {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    expect(made.status).toBe(201);
    const id = made.body.project_id as string;
    await t.api('GET', `/projects/${id}/wait?wait_seconds=20`);
    const add = (company: Record<string, unknown>) => t.api('POST', `/projects/${id}/rows`, { body: { company } });
    const count = async () => (await t.api('GET', `/projects/${id}`)).body.row_count as number;
    const settings = (body: Record<string, unknown>) => t.api('PUT', `/projects/${id}/settings`, { body });
    return { id, add, count, settings };
  }

  test('an insert of an existing key answers the existing row (200 "Row already exists"); a new key is a new row', async () => {
    const p = await project();
    const set = await p.settings({ unique_columns: ['Website'] });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ unique_columns: ['Website'], on_conflict: 'skip' });
    expect((await t.api('GET', `/projects/${p.id}`)).body.settings).toEqual({ unique_columns: ['Website'], on_conflict: 'skip' });

    const first = await p.add({ Name: 'Acme', Website: 'ACME.com', Email: null });
    expect(first.status).toBe(201);
    expect(first.body.message).toBe('Row created');
    const again = await p.add({ Name: 'Acme again', Website: 'https://www.acme.com/', Email: 'x@acme.com' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ row_id: first.body.row_id, message: 'Row already exists', error_detail: null });
    // Skipped: the existing row is untouched.
    const row = await t.api('GET', `/projects/${p.id}/rows/${first.body.row_id}`);
    expect(row.body.company.Name.value).toBe('Acme');
    expect(row.body.company.Email.value).toBeNull();
    expect(await p.count()).toBe(2);
    // A row without a key (its key columns empty) is always added.
    expect((await p.add({ Name: 'No site', Website: null, Email: null })).status).toBe(201);
    expect((await p.add({ Name: 'No site', Website: '', Email: null })).status).toBe(201);
  });

  test('add_rows: keys repeated inside the batch and keys already there answer their row, in order', async () => {
    const p = await project();
    await p.settings({ unique_columns: ['Website'] });
    const seed = await p.add({ Name: 'Globex', Website: 'globex.com', Email: null });
    const batch = await t.api('POST', `/projects/${p.id}/rows/batch`, {
      body: {
        rows: [
          { Name: 'Initech', Website: 'initech.com', Email: null },
          { Name: 'Globex again', Website: 'www.GLOBEX.com', Email: null },
          { Name: 'Initech twice', Website: 'http://INITECH.com/?ref=ads', Email: null },
          { Name: 'Hooli', Website: 'hooli.com', Email: null },
        ],
      },
    });
    expect(batch.status).toBe(201);
    expect(batch.body.created).toBe(2);
    expect(batch.body.existing).toBe(2);
    const [initech, globex, initechAgain, hooli] = batch.body.row_ids;
    expect(globex).toBe(seed.body.row_id);
    expect(initechAgain).toBe(initech);
    expect(new Set([initech, hooli, seed.body.row_id]).size).toBe(3);
  });

  test('concurrent inserts of one key make one row', async () => {
    const p = await project();
    await p.settings({ unique_columns: ['Website'] });
    const spellings = ['umbrella.com', 'UMBRELLA.com', 'https://umbrella.com', 'www.umbrella.com', 'umbrella.com/'];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => p.add({ Name: `Umbrella ${i}`, Website: spellings[i % spellings.length], Email: null })),
    );
    expect(answers.every((a) => a.status === 201 || a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.row_id)).size).toBe(1);
    expect(await p.count()).toBe(2); // the seed row and Umbrella
  });

  test('concurrent inserts of many keys, a few repeated, each get the right answer (written together, or alone when their batch clashes)', async () => {
    const p = await project();
    await p.settings({ unique_columns: ['Website'] });
    const sites = Array.from({ length: 24 }, (_, i) => `site${i % 20}.example`); // 4 repeats
    const answers = await Promise.all(sites.map((w, i) => p.add({ Name: `Co ${i}`, Website: w, Email: null })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(20);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
    const idOf = new Map<string, string>();
    sites.forEach((w, i) => {
      const id = (answers[i] as { body: { row_id: string } }).body.row_id;
      expect(idOf.get(w) ?? id).toBe(id); // the same site always answers the same row
      idOf.set(w, id);
    });
    expect(await p.count()).toBe(21); // the seed row and 20 sites
  });

  test('on_conflict "update" fills the existing row’s empty cells and keeps the others', async () => {
    const p = await project();
    expect((await p.settings({ unique_columns: ['Email'], on_conflict: 'update' })).body.on_conflict).toBe('update');
    const first = await p.add({ Name: 'Jane', Website: null, Email: 'Jane@Example.com' });
    const again = await p.add({ Name: 'Jane Doe', Website: 'janedoe.example', Email: 'jane@example.com' });
    expect(again.status).toBe(200);
    expect(again.body.row_id).toBe(first.body.row_id);
    expect(again.body.message).toContain('Row already exists');
    const row = await t.api('GET', `/projects/${p.id}/rows/${first.body.row_id}`);
    expect(row.body.company.Name.value).toBe('Jane'); // had a value: kept
    expect(row.body.company.Website.value).toBe('janedoe.example'); // was empty: filled
    // The filled value is filterable like any other (its cell key was written too).
    const website = (await t.api('GET', `/projects/${p.id}/columns`)).body.find((c: any) => c.name === 'Website').col_id;
    const rules = [{ type: 'and', rules: [{ col_id: website, operator: 'eq', value: 'janedoe.example' }] }];
    const found = await t.api('GET', `/projects/${p.id}/rows?filter_groups=${encodeURIComponent(JSON.stringify(rules))}`);
    expect(found.body.total_rows).toBe(1);
  });

  test('a deleted row frees its key; setting unique columns over rows that repeat a key is a 409 naming them, nothing changed', async () => {
    const p = await project('Name,Website,Email\nA,dup.example,\nB,https://dup.example/,\nC,other.example,');
    const refused = await p.settings({ unique_columns: ['Website'] });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.duplicates).toBe(1);
    expect(refused.body.detail.examples[0].row_ids).toHaveLength(2);
    expect((await t.api('GET', `/projects/${p.id}`)).body.settings.unique_columns).toEqual([]);

    const rows = (await t.api('GET', `/projects/${p.id}/rows`)).body.rows;
    const b = rows.find((r: any) => r.company.Name.value === 'B').id;
    expect((await t.api('DELETE', `/projects/${p.id}/rows`, { body: { row_ids: [b] } })).status).toBe(200);
    expect((await p.settings({ unique_columns: ['Website'] })).status).toBe(200);
    expect((await p.add({ Name: 'C again', Website: 'OTHER.example', Email: null })).status).toBe(200);
    const a = rows.find((r: any) => r.company.Name.value === 'A').id;
    expect((await t.api('DELETE', `/projects/${p.id}/rows`, { body: { row_ids: [a] } })).status).toBe(200);
    expect((await p.add({ Name: 'A back', Website: 'dup.example', Email: null })).status).toBe(201);
    // Removing the key: anything goes again.
    expect((await p.settings({ unique_columns: [] })).body.unique_columns).toEqual([]);
    expect((await p.add({ Name: 'A twice', Website: 'dup.example', Email: null })).status).toBe(201);
  });

  test('a builder run skips the rows whose key the project holds, and says so in its log', async () => {
    closeGate();
    const made = await t.api('POST', '/projects', { body: { builder_id: 'gate_builder', form_data: { count: 3 } } });
    const id = made.body.project_id;
    expect((await t.api('PUT', `/projects/${id}/settings`, { body: { unique_columns: ['Name'] } })).status).toBe(200);
    expect((await t.api('POST', `/projects/${id}/rows`, { body: { company: { Name: ' row   2 ' } } })).status).toBe(201);
    openGate();
    const built = await waitForBuilder(t, id);
    expect(built.builder_status.type).toBe('completed');
    expect(built.row_count).toBe(3); // Row 1, Row 3 and the row added by hand
    const page = built.lead_gen_execution_log.find((e: any) => e.step === 'page');
    expect(page).toMatchObject({ rows: 2, message: 'page 1: 2 rows written, 1 already in the project (unique key)' });
  });

  test('bad settings are a 422 naming the field, and change nothing; MCP update_project_settings does the same', async () => {
    const p = await project();
    const unknown = await p.settings({ unique_columns: ['Nope'] });
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.body.detail)).toContain('unique_columns[0]');
    await t.api('POST', `/projects/${p.id}/columns`, {
      body: { name: 'Domain', tool_id: 'domain_normalizer', config: { value: '{{Website}}' } },
    });
    expect((await p.settings({ unique_columns: ['Domain'] })).status).toBe(422);
    expect((await p.settings({ on_conflict: 'merge' })).status).toBe(422);
    expect((await t.api('GET', `/projects/${p.id}`)).body.settings).toEqual({ unique_columns: [], on_conflict: 'skip' });

    const client = await connect(t.service.mcpUrl as string, { 'service-api-key': t.key });
    try {
      const set = await call(client, 'update_project_settings', { project_id: p.id, unique_columns_json: '["Website","Name"]' });
      expect(set).toEqual({ ok: true, data: { unique_columns: ['Website', 'Name'], on_conflict: 'skip' } });
      const dup = await call(client, 'add_row', {
        project_id: p.id,
        company_json: JSON.stringify({ Name: 'SEED', Website: 'seed.example', Email: null }),
      });
      expect(dup.data.message).toBe('Row already exists');
    } finally {
      await client.close();
    }
    // Another workspace's project is not found.
    const other = await t.newWorkspace();
    const foreign = await t.api('PUT', `/projects/${p.id}/settings`, {
      headers: { 'service-api-key': other.key },
      body: { unique_columns: [] },
    });
    expect(foreign.status).toBe(404);
  });
});
