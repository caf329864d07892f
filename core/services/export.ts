import { stringify } from 'csv-stringify/sync';
import type { Kernel } from '../kernel.ts';
import type { Column, Project, StoredRow } from '../model.ts';
import { displayText } from '../rows/cell-values.ts';
import { rowQuery, toolColumnNos } from './rows.ts';

/** Rows read per statement while exporting: large enough for speed, small enough for flat memory. */
const EXPORT_PAGE = 2000;

/** What an export reads: the GET rows query, without pages. */
export interface ExportQuery {
  filter_groups?: unknown;
  sort_rules?: unknown;
  columns?: unknown;
}

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

/** A number as spreadsheets read one (`-12.5`, `+3`, `1e6`): left alone by the formula guard. */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Text a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
 * return, and is not a number), prefixed with `'` so that it opens as text (OWASP, CSV injection):
 * rows come from other systems and from inbound URLs anyone holding the URL can post to.
 */
export function spreadsheetSafe(text: string): string {
  return /^[=+\-@\t\r]/.test(text) && !NUMBER.test(text) ? `'${text}` : text;
}

/**
 * A project's rows as CSV (RFC 4180, written by csv-stringify; UTF-8, with a byte order mark when
 * asked, which Excel wants): a header of column names, then one line per row, each cell as the table
 * shows it (arrays joined with ", ", records as JSON), text that would run as a spreadsheet formula
 * prefixed with `'` unless `escapeFormulas` is false. Checked before the first byte (a bad filter is
 * a 422), then streamed a page at a time: memory stays flat however many rows there are.
 */
export async function exportCsv(
  kernel: Kernel,
  project: Project,
  q: ExportQuery,
  options: { bom?: boolean; escapeFormulas?: boolean } = {},
): Promise<ReadableStream<Uint8Array>> {
  const query = await rowQuery(kernel, project, q);
  const { shown } = query;
  const encoder = new TextEncoder();
  const text = options.escapeFormulas === false ? (s: string) => s : spreadsheetSafe;
  const pages = rowPages(kernel, project, query.columns, query);
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        const header = stringify([shown.map((c) => text(c.name))], { record_delimiter: 'windows' });
        controller.enqueue(encoder.encode((options.bom ? '\uFEFF' : '') + header));
        return;
      }
      const next = await pages.next();
      if (next.done) {
        controller.close();
        return;
      }
      const records = next.value.map((row) => shown.map((c) => text(displayText(row.cells[c.no]?.v ?? null))));
      controller.enqueue(encoder.encode(stringify(records, { record_delimiter: 'windows' })));
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
}
