import { Readable } from 'node:stream';
import { defineBuilder, fromSpreadsheetSafe, Type, type UploadHead, validationError } from 'workflow-service/plugin-sdk';
import { parse as parser } from 'csv-parse';
import { parse } from 'csv-parse/sync';

/** Most rows one import writes; the host stops there and says so (builder_status.warning) when the CSV has more. */
const MAX_ROWS = 1_000_000;
/** Characters one record may hold (its fields, and the parser's buffer for it): past this, the file is not valid CSV. */
const MAX_RECORD_CHARS = 2 * 1024 * 1024;
/** Characters of records a page holds at most, whatever its row count. */
const MAX_PAGE_CHARS = 4 * 1024 * 1024;
/** Characters fed to the streaming parser at a time: the text is in memory already, its parsed records never all are. */
const CHUNK_CHARS = 64 * 1024;

/**
 * The header line alone, when it can be told without parsing: the text before the first line break,
 * if it holds no quote (a quoted header may span lines; then the whole text goes to the parser,
 * which stops after the first record).
 */
function headerText(text: string): string {
  const end = text.indexOf('\n');
  if (end < 0) return text;
  const line = text.slice(0, end + 1);
  return line.includes('"') ? text : line;
}

/** Header names, in order; refuses an empty, blank or duplicated header with a fixable message (naming `what`: csv_text, or the uploaded file). */
export function csvHeader(text: string, what = 'csv_text'): string[] {
  const path = what === 'csv_text' ? 'form_data.csv_text' : 'form_data.upload_id';
  let header: string[];
  try {
    const records = parse(headerText(text), { bom: true, to_line: 1, relax_quotes: false }) as string[][];
    header = (records[0] ?? []).map((h) => h.trim());
  } catch (e) {
    throw validationError(`${what} is not valid CSV: ${(e as Error).message}`, [{ path, message: 'is not valid CSV' }]);
  }
  if (header.length === 0) {
    throw validationError(`${what} has no header row`, [{ path, message: 'needs a header row' }]);
  }
  const blank = header.indexOf('');
  if (blank >= 0) {
    throw validationError(`${what} header ${blank + 1} is empty; name every column`, [{ path, message: `header ${blank + 1} is empty` }]);
  }
  // One pass over a set: a header of 150,000 names is checked in milliseconds, not minutes.
  const seen = new Set<string>();
  const dup = header.find((h) => seen.size === seen.add(h).size);
  if (dup !== undefined) {
    throw validationError(`${what} header "${dup}" appears twice; column names must be unique`, [
      { path, message: `duplicate header "${dup}"` },
    ]);
  }
  return header;
}

/** The CSV the form names: its text, or the uploaded file's start (refused when it names neither, or both). */
function source(form: { csv_text?: string; upload_id?: string }, upload: UploadHead | undefined): { text: string; what: string } {
  // The catalog's template holds both fields empty: an empty one is not sent.
  form = { ...(form.csv_text ? { csv_text: form.csv_text } : {}), ...(form.upload_id ? { upload_id: form.upload_id } : {}) };
  if (form.csv_text !== undefined && form.upload_id !== undefined) {
    throw validationError('Send csv_text or upload_id, not both', [{ path: 'form_data', message: 'has both csv_text and upload_id' }]);
  }
  if (form.csv_text !== undefined) return { text: form.csv_text, what: 'csv_text' };
  if (form.upload_id !== undefined && upload) return { text: upload.head, what: `the file "${upload.name}"` };
  if (form.upload_id !== undefined) {
    throw validationError('upload_id names no file of this workspace (POST /projects/import.csv uploads one)', [
      { path: 'form_data.upload_id', message: 'names no upload' },
    ]);
  }
  throw validationError('Send csv_text (the CSV itself) or upload the file (POST /projects/import.csv)', [
    { path: 'form_data.csv_text', message: 'is required' },
  ]);
}

/** Records of an uploaded file, estimated from its start: the start's records scaled to the file's size. */
function estimateUpload(upload: UploadHead): number {
  const headBytes = Buffer.byteLength(upload.head);
  const records = estimateRecords(upload.head);
  if (headBytes >= upload.bytes || headBytes === 0) return records;
  return Math.round(((records + 1) * upload.bytes) / headBytes) - 1;
}

/**
 * Data records, estimated without parsing: the lines after the first. Blank lines and line breaks
 * inside quoted fields make it an upper bound; it only serves the run's progress.
 */
export function estimateRecords(text: string): number {
  // Line breaks are \n or \r\n; a file of bare \r (old Mac) has no \n at all.
  const lf = text.includes('\n') ? '\n' : '\r';
  let lines = 0;
  for (let at = text.indexOf(lf); at >= 0; at = text.indexOf(lf, at + 1)) lines++;
  const trailing = text.length > 0 && !text.endsWith(lf) ? 1 : 0;
  return Math.max(0, lines + trailing - 1);
}

/** The text in slices of about CHUNK_CHARS, never splitting a surrogate pair (each slice is encoded on its own). */
export function* chunks(text: string): Generator<string> {
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + CHUNK_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    yield text.slice(i, end);
    i = end;
  }
}

/**
 * The data records as they are parsed, in pages of `pageRows`: csv-parse's streaming parser is fed
 * the text a chunk at a time (from memory, or an upload's parts as the host reads them), so at most
 * a page of records (and the parser's small buffers) is held. The first `skip` records are passed
 * over (a resumed run). Stopping early (the host has written all it may) ends the parse.
 */
async function* recordPages(
  text: Iterable<string> | AsyncIterable<string>,
  what: string,
  pageRows: number,
  skip: number,
): AsyncGenerator<(string | null)[][]> {
  const source = Readable.from(text);
  // A stray quote would otherwise make one field of the rest of the file: a record is bounded.
  // An empty field is an empty cell (null); a quoted one ("") is the empty text, as the export writes them.
  const records = parser({
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD_CHARS,
    cast: (value, context) => (value === '' && !context.quoting ? null : value),
  });
  source.pipe(records);
  let page: (string | null)[][] = [];
  let pageChars = 0;
  let header = true;
  let seen = 0;
  try {
    for await (const record of records as AsyncIterable<(string | null)[]>) {
      if (header) {
        header = false;
        continue;
      }
      if (seen++ < skip) continue;
      page.push(record);
      for (const field of record) pageChars += field?.length ?? 0;
      // A page ends at pageRows, or sooner when its records are large (one insert stays a few MB).
      if (page.length === pageRows || pageChars >= MAX_PAGE_CHARS) {
        yield page;
        page = [];
        pageChars = 0;
      }
    }
    if (page.length) yield page;
  } catch (e) {
    throw new Error(`${what} is not valid CSV: ${(e as Error).message}`);
  } finally {
    source.destroy();
    records.destroy();
  }
}

export default defineBuilder({
  kind: 'builder',
  id: 'csv_import_builder',
  version: '1.0.0',
  name: 'CSV import',
  summary: 'Starts from your own spreadsheet: paste it or send a CSV file, one row per line.',
  description:
    'Creates one row per CSV record. The first line is the header: each header becomes an input column, in order. Quoted fields may hold commas and newlines; a UTF-8 BOM is ignored. ' +
    'An empty field is an empty cell, a quoted empty field ("") an empty text; a leading \' before =, +, -, @ (how the export writes text a spreadsheet would evaluate) is taken off. ' +
    'Send the CSV as csv_text, or upload a file of any size (POST /projects/import.csv, which makes the project) and name it by upload_id. ' +
    `At most ${MAX_ROWS.toLocaleString('en-US')} rows (and the plan's rows per project): a longer file imports its first rows and the run completes with builder_status.warning saying where it stopped. Needs no provider.`,
  category: 'import',
  tags: ['import', 'csv'],
  legacyIds: ['csv_import'],
  input: Type.Object(
    {
      csv_text: Type.Optional(
        Type.String({
          minLength: 1,
          description: `CSV text with a header row. At most ${MAX_ROWS.toLocaleString('en-US')} data rows are imported: a longer file stops there, keeps those rows and completes with builder_status.warning (split it to import the rest).`,
        }),
      ),
      upload_id: Type.Optional(
        Type.String({ description: 'An uploaded CSV file of this workspace (POST /projects/import.csv), instead of csv_text.' }),
      ),
    },
    { additionalProperties: false },
  ),
  cost: { credits: 0, per: 'row' },
  maxRows: MAX_ROWS,
  uploads: { mediaTypes: ['text/csv', 'text/plain', 'application/csv', 'application/vnd.ms-excel', 'application/octet-stream'] },
  columns: (form, upload) => {
    const { text, what } = source(form, upload);
    return csvHeader(text, what);
  },
  projectName: (form, upload) => {
    const { text, what } = source(form, upload);
    return upload && form.upload_id ? upload.name : `CSV import (${csvHeader(text, what).length} columns)`;
  },
  target: (form, upload) => (form.csv_text || !upload ? estimateRecords(form.csv_text ?? '') : estimateUpload(upload)),
  // Yields every record it finds: the host writes up to maxRows (and the plan's quota) and, seeing
  // more, stops with a warning instead of dropping them silently. Each page's cursor counts the
  // records read so far, so a run taken over after a crash goes on after them.
  async *run(form, ctx) {
    const { text, what } = source(form, ctx.upload);
    const header = csvHeader(text, what);
    const resumed = (ctx.resume?.cursor as { records?: number } | undefined)?.records ?? 0;
    let records = resumed;
    const parts = form.csv_text ? chunks(form.csv_text) : (ctx.upload as NonNullable<typeof ctx.upload>).text();
    for await (const page of recordPages(parts, what, ctx.pageRows, resumed)) {
      records += page.length;
      yield {
        rows: page.map((rec) => {
          const row: Record<string, unknown> = {};
          header.forEach((h, j) => {
            // What the export guarded against formulas ('=x) reads back as it was (=x).
            const v = rec[j];
            row[h] = v === undefined || v === null ? null : fromSpreadsheetSafe(v);
          });
          return row;
        }),
        cursor: { records },
      };
    }
  },
});
