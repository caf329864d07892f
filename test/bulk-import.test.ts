import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parse } from 'csv-parse/sync';
import type { SqlStorage } from '../adapters/storage/sql-storage.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

/** A CSV of `n` records with what a real export holds: quotes, commas, line breaks, accents, emoji, empty cells. */
function csvOf(n: number): string {
  const lines = ['Name,Website,Notes,Employees'];
  for (let i = 1; i <= n; i++) {
    const notes = i % 7 === 0 ? `"line one\nline two, ""quoted"""` : i % 5 === 0 ? 'Crème brûlée 🍮' : '';
    lines.push(`Company ${i},company${i}.example,${notes},${i % 3 === 0 ? '' : i * 10}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** A body sent in small pieces, cut inside multi-byte characters: the service must put them back together. */
function trickle(text: string, piece = 4093): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + piece));
      at += piece;
    },
  });
}

/** Bulk import (docs/enrichment.md): a CSV of any size arrives by upload, streamed to storage, and is imported in large pages. */
describe.each(DIALECTS)('CSV upload on %s', (dialect) => {
  let t: TestService;
  const upload = (body: BodyInit, query = '', headers: Record<string, string> = {}) =>
    fetch(`${t.url}/projects/import.csv${query}`, {
      method: 'POST',
      headers: { 'service-api-key': t.key, 'content-type': 'text/csv', ...headers },
      body,
      // @ts-expect-error Bun sends a stream body as it comes (chunked)
      duplex: 'half',
    });
  const exported = async (projectId: string) =>
    parse(
      await (await fetch(`${t.url}/projects/${projectId}/export.csv?escape_formulas=0`, { headers: { 'service-api-key': t.key } })).text(),
      {
        columns: true,
      },
    ) as Record<string, string>[];
  const uploadsLeft = async () =>
    Number(
      (
        await (t.service.kernel.storage as SqlStorage).database.db
          .selectFrom('uploads')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  beforeAll(async () => {
    t = await startTestService(dialect, {
      MAX_UPLOAD_BYTES: '8000000',
      PLANS_JSON: JSON.stringify({
        one: { apiAccess: true, maxProjects: 1, requestsPerMinute: null },
        capped: { apiAccess: true, maxRowsPerProject: 12_000, requestsPerMinute: null },
      }),
    });
  });
  afterAll(() => t.stop());

  test('a streamed body becomes a project: every record once, in order, as written; the file is deleted afterwards', async () => {
    const n = 12_000;
    const text = csvOf(n);
    const r = await upload(trickle(text), '?name=Leads%20Q4');
    expect(r.status).toBe(201);
    const made = await r.json();
    expect(made).toMatchObject({ bytes: Buffer.byteLength(text) });
    const project = await waitForBuilder(t, made.project_id, 60_000);
    expect(project).toMatchObject({ name: 'Leads Q4', row_count: n, builder_status: { type: 'completed' } });
    const rows = await exported(made.project_id);
    expect(rows).toHaveLength(n);
    expect(rows[0]).toEqual({ Name: 'Company 1', Website: 'company1.example', Notes: '', Employees: '10' });
    expect(rows[6]).toEqual({ Name: 'Company 7', Website: 'company7.example', Notes: 'line one\nline two, "quoted"', Employees: '70' });
    expect(rows[4]?.Notes).toBe('Crème brûlée 🍮');
    expect(rows.map((row) => row.Name)).toEqual(Array.from({ length: n }, (_, i) => `Company ${i + 1}`));
    // Large pages: a few page entries, not one per 100 rows.
    const pages = project.lead_gen_execution_log.filter((e: any) => e.step === 'page').length;
    expect(pages).toBe(Math.ceil(n / t.service.kernel.storage.rows.bulkRows));
    expect(await uploadsLeft()).toBe(0);
  });

  // On MariaDB two pages go in at once (bulkLanes): what a failed or cut-short run keeps is still whole pages, in order.
  test('a refused row in a later page fails the run: the pages before it are kept, in order, and logged; nothing from its page on', async () => {
    const pageRows = t.service.kernel.storage.rows.bulkRows;
    const lines = csvOf(3 * pageRows).split('\r\n');
    const bad = Math.floor(1.5 * pageRows); // a record of the second page
    lines[bad] = `Huge,huge.example,${'x'.repeat(300_000)},1`;
    const r = await upload(lines.join('\r\n'));
    expect(r.status).toBe(201);
    const id = (await r.json()).project_id;
    const p = await waitForBuilder(t, id, 60_000);
    expect(p.builder_status.type).toBe('failed');
    expect(p.builder_status.error_message).toContain('MAX_CELL_BYTES');
    expect(p.row_count).toBe(pageRows);
    expect((await exported(id)).map((row) => row.Name)).toEqual(Array.from({ length: pageRows }, (_, i) => `Company ${i + 1}`));
    const pages = p.lead_gen_execution_log.filter((e: any) => e.step === 'page');
    expect(pages).toEqual([expect.objectContaining({ page: 1, rows: pageRows, total_rows: pageRows })]);
    expect(await uploadsLeft()).toBe(0);
  });

  test('the plan’s rows per project stop a many-page import at exactly the limit, the first rows of the file', async () => {
    const ws = await t.newWorkspace('capped');
    const r = await upload(csvOf(15_000), '', { 'service-api-key': ws.key });
    expect(r.status).toBe(201);
    const id = (await r.json()).project_id;
    const p = await waitForBuilder(
      { ...t, api: (m, path, init) => t.api(m, path, { ...init, headers: { 'service-api-key': ws.key } }) },
      id,
      60_000,
    );
    expect(p.builder_status.type).toBe('completed');
    expect(p.builder_status.warning).toStartWith('stopped at 12,000 rows: the capped plan holds at most 12,000 rows per project');
    expect(p.row_count).toBe(12_000);
    const rows = parse(await (await fetch(`${t.url}/projects/${id}/export.csv`, { headers: { 'service-api-key': ws.key } })).text(), {
      columns: true,
    }) as Record<string, string>[];
    expect(rows.map((row) => row.Name)).toEqual(Array.from({ length: 12_000 }, (_, i) => `Company ${i + 1}`));
  });

  test('multipart/form-data with a "file" part: the project takes the file’s name', async () => {
    const form = new FormData();
    form.append('file', new Blob([csvOf(50)], { type: 'text/csv' }), 'crm-export.csv');
    const r = await fetch(`${t.url}/projects/import.csv`, { method: 'POST', headers: { 'service-api-key': t.key }, body: form });
    expect(r.status).toBe(201);
    const project = await waitForBuilder(t, (await r.json()).project_id);
    expect(project).toMatchObject({ name: 'crm-export.csv', row_count: 50 });
  });

  test('bad files are refused with a JSON detail and leave nothing behind', async () => {
    const projectsBefore = (await t.api('GET', '/projects?limit=100')).body.total;
    const cases: [BodyInit, Record<string, string>, number, string][] = [
      ['', {}, 422, 'empty'],
      ['Name,Name\nA,B\n', {}, 422, 'appears twice'],
      [',\n1\n', {}, 422, 'empty'],
      [csvOf(10), { 'content-type': 'application/json' }, 415, 'text/csv'],
      [csvOf(200_000), {}, 413, 'MAX_UPLOAD_BYTES'],
    ];
    for (const [body, headers, status, words] of cases) {
      const r = await upload(body, '', headers);
      expect(r.status).toBe(status);
      expect(JSON.stringify((await r.json()).detail)).toContain(words);
    }
    expect((await fetch(`${t.url}/projects/import.csv`, { method: 'POST', body: 'a\n1' })).status).toBe(401);
    expect((await t.api('GET', '/projects?limit=100')).body.total).toBe(projectsBefore);
    expect(await uploadsLeft()).toBe(0);
  });

  test('what a spreadsheet saves: not UTF-8, UTF-16 or another charset is a 422 saying what to do; a UTF-8 file name is kept', async () => {
    const latin1 = new Uint8Array([...new TextEncoder().encode('Name\nCaf'), 0xe9, 0x0a]);
    const utf16 = new Uint8Array([0xff, 0xfe, 0x4e, 0x00, 0x0a, 0x00]);
    for (const [body, headers, words] of [
      [latin1, {}, 'not UTF-8'],
      [utf16, {}, 'UTF-16'],
      ['Name\nA\n', { 'content-type': 'text/csv; charset=windows-1252' }, 'must be UTF-8'],
    ] as [BodyInit, Record<string, string>, string][]) {
      const r = await upload(body, '', headers);
      expect(r.status).toBe(422);
      expect(JSON.stringify((await r.json()).detail)).toContain(words);
    }
    const form = new FormData();
    form.append('file', new Blob(['Name,Website']), 'café.csv'); // a header alone, no line break
    const r = await fetch(`${t.url}/projects/import.csv`, { method: 'POST', headers: { 'service-api-key': t.key }, body: form });
    expect(r.status).toBe(201);
    const project = await waitForBuilder(t, (await r.json()).project_id);
    expect(project).toMatchObject({ name: 'café.csv', row_count: 0, builder_status: { type: 'completed' } });
    expect((await t.api('GET', `/projects/${project.id}/columns`)).body.map((c: any) => c.name)).toEqual(['Name', 'Website']);
    expect(await uploadsLeft()).toBe(0);
  });

  test('a broken multipart body is a 422, not a 500', async () => {
    const noBoundary = await upload('--x\r\nfoo', '', { 'content-type': 'multipart/form-data' });
    expect(noBoundary.status).toBe(422);
    const cut = await upload('--b\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nName\nAcme\n', '', {
      'content-type': 'multipart/form-data; boundary=b',
    });
    expect(cut.status).toBe(422);
    expect(JSON.stringify((await cut.json()).detail)).toContain('multipart');
    expect(await uploadsLeft()).toBe(0);
  });

  test('checks come before the file is stored: a bad header past the size limit is a 422, a workspace at its project quota a 403', async () => {
    const big = `Name,Name\n${'x,y\n'.repeat(2_500_000)}`; // 10 MB, over the 8 MB limit
    const r = await upload(trickle(big, 65_536)); // streamed: no Content-Length to refuse up front
    expect(r.status).toBe(422);
    expect(JSON.stringify((await r.json()).detail)).toContain('appears twice');
    const full = await t.newWorkspace('one');
    await t.api('POST', '/projects', {
      headers: { 'service-api-key': full.key },
      body: { builder_id: 'manual_list_builder', form_data: { companies: 'A' } },
    });
    const refused = await upload(csvOf(10), '', { 'service-api-key': full.key });
    expect(refused.status).toBe(403);
    expect((await refused.json()).detail.code).toBe('quota_exceeded');
    expect(await uploadsLeft()).toBe(0);
  });

  test('a stray quote fails the run with the parser’s reason instead of reading the rest of the file as one field; large rows make smaller pages', async () => {
    const stray = `Name,Notes\nAcme,"unclosed\n${'Globex,ok\n'.repeat(250_000)}`; // 2.5 MB after the quote
    const r = await upload(stray);
    expect(r.status).toBe(201);
    const failed = await waitForBuilder(t, (await r.json()).project_id, 60_000);
    expect(failed.builder_status.type).toBe('failed');
    expect(failed.builder_status.error_message).toContain('is not valid CSV');
    expect(failed.builder_status.error_message).toContain('maximum'); // stopped at the record bound, not at the end of the file
    const wide = `Name,Notes\n${Array.from({ length: 60 }, (_, i) => `Row ${i},${'z'.repeat(100_000)}`).join('\n')}\n`;
    const made = await upload(wide);
    const p = await waitForBuilder(t, (await made.json()).project_id, 60_000);
    expect(p).toMatchObject({ row_count: 60, builder_status: { type: 'completed' } });
    // 6 MB of records: more than one page, whatever the rows per page.
    expect(p.lead_gen_execution_log.filter((e: any) => e.step === 'page').length).toBeGreaterThan(1);
  });

  test('an Idempotency-Key makes a retried upload the first one: one project, the same answer', async () => {
    const before = (await t.api('GET', '/projects?limit=100')).body.total;
    const send = (key: string, query = '?name=Retry') => upload(csvOf(20), query, { 'idempotency-key': key });
    const first = await send('upload-1');
    expect(first.status).toBe(201);
    const again = await send('upload-1');
    expect(again.status).toBe(201);
    const a = await first.json();
    expect(await again.json()).toEqual(a);
    expect((await t.api('GET', '/projects?limit=100')).body.total).toBe(before + 1);
    const other = await send('upload-1', '?name=Another');
    expect(other.status).toBe(422);
    expect((await other.json()).detail.message).toContain('Idempotency-Key');
    await waitForBuilder(t, a.project_id);
  });

  test('an upload_id names only this workspace’s file, once', async () => {
    const stored = await t.service.kernel.storage.uploads;
    const other = await t.newWorkspace();
    // A file of the other workspace, stored but not imported.
    const { storeUpload } = await import('../core/services/uploads.ts');
    const ws = await t.service.kernel.storage.workspaces.get(other.workspaceId);
    const theirs = await storeUpload(t.service.kernel, ws as never, 'theirs.csv', trickle('Name\nSecret Co\n') as never, 10_000);
    const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { upload_id: theirs.id } } });
    expect(r.status).toBe(400); // POST /projects answers a bad form with 400, as the spec says
    expect(r.body.detail.message).toContain('upload_id names no file of this workspace');
    await stored.remove(theirs.id);
    const both = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'a\n1', upload_id: 'x' } },
    });
    expect(both.status).toBe(400);
    expect(both.body.detail.message).toContain('not both');
  });
});
