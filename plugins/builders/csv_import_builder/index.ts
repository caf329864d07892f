import { Type } from '@sinclair/typebox';
import { parse } from 'csv-parse/sync';
import { validationError } from '../../../core/errors.ts';
import { defineBuilder } from '../../../core/plugins/plugin-types.ts';

const MAX_ROWS = 100_000;

/** Header names, in order; refuses an empty, blank or duplicated header with a fixable message. */
export function csvHeader(text: string): string[] {
  let header: string[];
  try {
    const records = parse(text, { bom: true, to_line: 1, relax_quotes: false }) as string[][];
    header = (records[0] ?? []).map((h) => h.trim());
  } catch (e) {
    throw validationError(`csv_text is not valid CSV: ${(e as Error).message}`, [
      { path: 'form_data.csv_text', message: 'is not valid CSV' },
    ]);
  }
  if (header.length === 0) {
    throw validationError('csv_text has no header row', [{ path: 'form_data.csv_text', message: 'needs a header row' }]);
  }
  const blank = header.findIndex((h) => h === '');
  if (blank >= 0) {
    throw validationError(`csv_text header ${blank + 1} is empty; name every column`, [
      { path: 'form_data.csv_text', message: `header ${blank + 1} is empty` },
    ]);
  }
  const dup = header.find((h, i) => header.indexOf(h) !== i);
  if (dup !== undefined) {
    throw validationError(`csv_text header "${dup}" appears twice; column names must be unique`, [
      { path: 'form_data.csv_text', message: `duplicate header "${dup}"` },
    ]);
  }
  return header;
}

function dataRecords(text: string): string[][] {
  const records = parse(text, {
    bom: true,
    from_line: 2,
    skip_empty_lines: true,
    relax_column_count: true,
  }) as string[][];
  return records.slice(0, MAX_ROWS);
}

export default defineBuilder({
  kind: 'builder',
  id: 'csv_import_builder',
  version: '1.0.0',
  name: 'CSV import',
  description:
    'Creates one row per CSV record. The first line is the header: each header becomes an input column, in order. Quoted fields may hold commas and newlines; a UTF-8 BOM is ignored. Needs no provider.',
  category: 'import',
  tags: ['import', 'csv'],
  legacyIds: ['csv_import'],
  input: Type.Object(
    {
      csv_text: Type.String({ minLength: 1, description: 'CSV text with a header row (at most 100,000 data rows).' }),
    },
    { additionalProperties: false },
  ),
  cost: { credits: 0, per: 'row' },
  maxRows: MAX_ROWS,
  columns: (form) => csvHeader(form.csv_text),
  projectName: (form) => `CSV import (${csvHeader(form.csv_text).length} columns)`,
  target: (form) => dataRecords(form.csv_text).length,
  async *run(form) {
    const header = csvHeader(form.csv_text);
    const records = dataRecords(form.csv_text);
    for (let i = 0; i < records.length; i += 500) {
      yield records.slice(i, i + 500).map((rec) => {
        const row: Record<string, unknown> = {};
        header.forEach((h, j) => {
          const v = rec[j];
          row[h] = v === undefined || v === '' ? null : v;
        });
        return row;
      });
    }
  },
});
