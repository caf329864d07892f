import { type Options as CsvOptions, stringify } from 'csv-stringify/sync';
import type { Kernel } from '../kernel.ts';
import type { Column, Project, StoredRow } from '../model.ts';
import { primaryField } from '../columns/column-view.ts';
import { displayText, primaryValue } from '../rows/cell-values.ts';
import { spreadsheetSafe } from '../rows/spreadsheet-text.ts';
import { rowQuery, toolColumnNos } from './rows.ts';

/** Rows read per statement while exporting: large enough for speed, small enough for flat memory. */
const EXPORT_PAGE = 2000;

/** What an export reads: the GET rows query, without pages. */
export interface ExportQuery {
  filter_groups?: unknown;
  sort_rules?: unknown;
  columns?: unknown;
}

/** How an export writes its cells: `escapeFormulas` (default true), and tool results as their primary value or whole (`values: 'json'`). */
export interface ExportOptions {
  bom?: boolean;
  escapeFormulas?: boolean;
  values?: 'primary' | 'json';
}

/**
 * RFC 4180 as every reader takes it: a field holding a delimiter, a quote, CR or LF, or leading or
 * trailing blanks is quoted, and an empty string is written `""` so that it reads back apart from an
 * empty cell (null, written as nothing). csv-stringify quotes line breaks by default; naming them
 * keeps the file right whatever its defaults become.
 */
const CSV_OPTIONS: CsvOptions = {
  record_delimiter: 'windows',
  quoted_match: [/[\r\n]/, /^\s|\s$/],
  cast: { string: (v: string) => (v === '' ? { value: '', quoted_empty: true } : v) },
};

/**
 * The rows of an export, page by page: without a filter or a sort, a walk by row id (each page a
 * seek on the primary key); with them, the listing's pages (deep pages seek from remembered anchors).
 */
async function* rowPages(kernel: Kernel, project: Project, columns: Column[], q: Awaited<ReturnType<typeof rowQuery>>) {
  const toolCols = toolColumnNos(columns);
  if (!q.filter && q.sort.length === 0) {
    for (let after = 0; ; ) {
      const page = await kernel.storage.rows.pageAfter(project.pk, after, EXPORT_PAGE, toolCols);
      if (page.length === 0) return;
      yield page;
      after = (page[page.length - 1] as StoredRow).seq;
    }
  }
  for (let offset = 0; ; offset += EXPORT_PAGE) {
    const { rows } = await kernel.storage.rows.page({
      projectPk: project.pk,
      toolCols,
      filter: q.filter,
      sort: q.sort,
      limit: EXPORT_PAGE,
      offset,
    });
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < EXPORT_PAGE) return;
  }
}

/**
 * A project's rows as CSV (RFC 4180, written by csv-stringify; UTF-8, with a byte order mark when
 * asked, which Excel wants): a header of column names, then one line per row; a tool's result as its
 * primary value (the whole record as JSON with `values: 'json'`), arrays joined with ", ", text that
 * would run as a spreadsheet formula prefixed with `'` unless `escapeFormulas` is false. Checked before the first byte (a bad filter is
 * a 422), then streamed a page at a time: memory stays flat however many rows there are.
 */
export async function exportCsv(
  kernel: Kernel,
  project: Project,
  q: ExportQuery,
  options: ExportOptions = {},
): Promise<ReadableStream<Uint8Array>> {
  const query = await rowQuery(kernel, project, q);
  const { shown } = query;
  const encoder = new TextEncoder();
  const guard = options.escapeFormulas === false ? (s: string) => s : spreadsheetSafe;
  const fields = shown.map((c) => (options.values === 'json' ? null : primaryField(kernel.plugins, c)));
  // null stays null (an empty field), so that it reads back apart from the empty string.
  const cell = (v: unknown, i: number) => {
    const shownValue = primaryValue(v ?? null, fields[i] as string | null);
    return shownValue === null || shownValue === undefined ? null : guard(displayText(shownValue));
  };
  const pages = rowPages(kernel, project, query.columns, query);
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        const header = stringify([shown.map((c) => guard(c.name))], CSV_OPTIONS);
        controller.enqueue(encoder.encode((options.bom ? '\uFEFF' : '') + header));
        return;
      }
      const next = await pages.next();
      if (next.done) {
        controller.close();
        return;
      }
      const records = next.value.map((row) => shown.map((c, i) => cell(row.cells[c.no]?.v, i)));
      controller.enqueue(encoder.encode(stringify(records, CSV_OPTIONS)));
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
}
