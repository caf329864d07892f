import type { Kernel } from '../../core/kernel.ts';
import { type Envelope, failureEnvelope } from './envelope.ts';

interface RowPage {
  rows: unknown[];
  page: number;
  page_size: number;
  total_rows: number;
  total_pages: number;
}

const isRowPage = (data: unknown): data is RowPage =>
  typeof data === 'object' &&
  data !== null &&
  Array.isArray((data as RowPage).rows) &&
  Number.isInteger((data as RowPage).page) &&
  Number.isInteger((data as RowPage).page_size);

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** The largest k ≤ max dividing `offset` (every k divides 0): pages of k rows then start exactly at the offset. */
function alignedSize(max: number, offset: number): number {
  for (let k = max; k > 1; k--) if (offset % k === 0) return k;
  return max >= 1 ? 1 : 0;
}

/**
 * Keeps the text of a tool result — what an agent reads — under MCP_MAX_RESULT_BYTES (docs/mcp.md;
 * `structuredContent` repeats it for programs): a page of rows that would be larger is cut to the
 * rows that fit, and answered as the page of that smaller page_size it then is (so `page + 1` with
 * the same page_size continues exactly where it stopped), saying so in `truncated`; any other read
 * too large is an error that says how to ask for less. A write's answer is never replaced: it
 * happened, and an error would make the agent do it again.
 */
export function fitted(kernel: Kernel, envelope: Envelope & { truncated?: string }, read = true): { envelope: Envelope; text: string } {
  const limit = kernel.config.mcpMaxResultBytes;
  const text = JSON.stringify(envelope);
  // Bytes ≥ characters, and at most 3 per UTF-16 unit: count them only near the bound.
  const size = text.length * 3 <= limit ? text.length : Buffer.byteLength(text);
  if (size <= limit || !read) return { envelope, text };
  if (envelope.ok && isRowPage(envelope.data)) {
    const page = envelope.data;
    const note = 420; // room for the `truncated` sentence and the changed numbers
    let budget = limit - bytes({ ...envelope, data: { ...page, rows: [] } }) - note;
    let fit = 0;
    for (const row of page.rows) {
      budget -= bytes(row) + 1;
      if (budget < 0) break;
      fit++;
    }
    const offset = (page.page - 1) * page.page_size;
    const k = alignedSize(fit, offset);
    if (k > 0) {
      const at = offset / k + 1;
      const data = { ...page, rows: page.rows.slice(0, k), page: at, page_size: k, total_pages: Math.ceil(page.total_rows / k) };
      const cut = {
        ...envelope,
        data,
        truncated: `This page was cut to ${k} rows to stay under ${limit} bytes (MCP_MAX_RESULT_BYTES): it is page ${at} of page_size ${k}. For the next rows ask page=${at + 1}, page_size=${k}; for more rows per page, ask fewer columns (columns_json) or format "values".`,
      } as Envelope;
      return { envelope: cut, text: JSON.stringify(cut) };
    }
  }
  const refused = failureEnvelope({
    code: 'payload_too_large',
    status: 413,
    detail: {
      message: `This answer would be ${size} bytes, over MCP_MAX_RESULT_BYTES (${limit}): ask for less — a smaller page_size, fewer columns (columns_json), format "values", or search_tools instead of list_tools.`,
    },
    headers: {},
  });
  return { envelope: refused, text: JSON.stringify(refused) };
}
