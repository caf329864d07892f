/**
 * Bulk import at size (docs/enrichment.md, issue "What users of enrichment tables ask for most, part 2"):
 * uploads a CSV of BENCH_IMPORT_ROWS records (default 1,000,000; 6 columns, as a CRM export) to
 * POST /projects/import.csv as a stream, then waits for csv_import_builder to write every row.
 * Prints the upload time, the import time and rows/s, and checks the row count.
 *
 *   bun run bench:import                          # MariaDB, 1,000,000 rows
 *   BENCH_DIALECTS=sqlite BENCH_IMPORT_ROWS=200000 bun run bench:import
 */
import { setLogLevel } from '../../core/log.ts';
import { type Backend, type BenchDialect, startBackend } from './backends.ts';

const COLUMNS = 'Name,Website,City,Phone,Employees,Industry';
const CITIES = ['Lyon', 'Paris', 'Berlin', 'Madrid', 'Milano', 'Porto', 'Gent'];
const INDUSTRIES = ['software', 'retail', 'dental', 'logistics', 'finance'];

/** Record `i` of the file (about 90 bytes). */
const record = (i: number) =>
  `Company ${i} SAS,https://company${i}.example,${CITIES[i % CITIES.length]},+33 4 72 ${String(i % 100).padStart(2, '0')} ${String(i % 97).padStart(2, '0')} 00,${(i * 37) % 5000},${INDUSTRIES[i % INDUSTRIES.length]}`;

/** The file as a stream of ~1 MB chunks, made as it is sent (the bench holds no 100 MB string). */
function csvStream(rows: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next === 0) controller.enqueue(encoder.encode(`${COLUMNS}\r\n`));
      if (next >= rows) return controller.close();
      const end = Math.min(rows, next + 10_000);
      const lines: string[] = [];
      for (let i = next; i < end; i++) lines.push(record(i + 1));
      next = end;
      controller.enqueue(encoder.encode(`${lines.join('\r\n')}\r\n`));
    },
  });
}

export interface ImportFigures {
  rows: number;
  uploadSeconds: number;
  importSeconds: number;
  rowsPerSecond: number;
}

/** Uploads `rows` records and waits for the import; answers the figures. */
export async function measureImport(backend: Backend, rows: number, log: (line: string) => void = () => {}): Promise<ImportFigures> {
  const t0 = performance.now();
  const res = await fetch(`${backend.url}/projects/import.csv?name=bench`, {
    method: 'POST',
    headers: { 'service-api-key': backend.key, 'content-type': 'text/csv' },
    body: csvStream(rows),
    // @ts-expect-error Bun streams the body (chunked)
    duplex: 'half',
  });
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  const { project_id } = (await res.json()) as { project_id: string };
  const uploaded = performance.now();
  let lastLog = uploaded;
  for (;;) {
    const p = (await (await fetch(`${backend.url}/projects/${project_id}`, { headers: { 'service-api-key': backend.key } })).json()) as {
      row_count: number;
      builder_status: { type: string; message?: string };
    };
    if (p.builder_status.type === 'completed' || p.builder_status.type === 'failed') {
      if (p.builder_status.type === 'failed' || p.row_count !== rows)
        throw new Error(`import ended ${JSON.stringify(p.builder_status)} with ${p.row_count} rows`);
      break;
    }
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`  import: ${p.row_count.toLocaleString('en-US')} / ${rows.toLocaleString('en-US')} rows`);
    }
    await Bun.sleep(200);
  }
  const done = performance.now();
  const importSeconds = (done - uploaded) / 1000;
  return { rows, uploadSeconds: (uploaded - t0) / 1000, importSeconds, rowsPerSecond: rows / importSeconds };
}

export const importLine = (dialect: string, f: ImportFigures) =>
  `${dialect}: ${f.rows.toLocaleString('en-US')} rows (6 columns) uploaded in ${f.uploadSeconds.toFixed(1)} s, imported in ${f.importSeconds.toFixed(1)} s — ${Math.round(f.rowsPerSecond).toLocaleString('en-US')} rows/s`;

if (import.meta.main) {
  setLogLevel('warn');
  const rows = Number(process.env.BENCH_IMPORT_ROWS ?? 1_000_000);
  const dialects = (process.env.BENCH_DIALECTS ?? 'mysql').split(',') as BenchDialect[];
  for (const dialect of dialects) {
    const backend = await startBackend(dialect, { workers: 1 });
    try {
      console.log(importLine(dialect, await measureImport(backend, rows, (l) => process.stderr.write(`${l}\n`))));
    } finally {
      await backend.stop();
    }
  }
}
