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

/** Bulk import (DESIGN §12): a CSV of any size arrives by upload, streamed to storage, and is imported in large pages. */
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
    t = await startTestService(dialect, { MAX_UPLOAD_BYTES: '3000000' });
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
      [csvOf(80_000), {}, 413, 'MAX_UPLOAD_BYTES'],
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
