/**
 * CSV export at size (docs/enrichment.md, issue "What users of enrichment tables ask for most, part 2"):
 * seeds BENCH_EXPORT_ROWS rows (default 1,000,000) into a project, then downloads
 * GET /projects/{id}/export.csv over HTTP, counting lines and watching the service's memory.
 * Prints rows/s, seconds and the peak resident memory above the level before the download.
 *
 *   bun run bench:export                     # MariaDB, 1,000,000 rows
 *   BENCH_DIALECTS=sqlite BENCH_EXPORT_ROWS=200000 bun run bench:export
 */
import { startBackend, type BenchDialect } from './backends.ts';
import { createBenchProject, seedRows } from './seed.ts';

const rows = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const dialects = (process.env.BENCH_DIALECTS ?? 'mysql').split(',') as BenchDialect[];

for (const dialect of dialects) {
  const backend = await startBackend(dialect);
  try {
    const { project, columns } = await createBenchProject(backend.storage, backend.workspaceId, 'export bench');
    const seeded = await seedRows(backend.storage, project.pk, columns, 0, rows, { batch: 1_000, concurrency: 4, label: 'seed' });
    console.log(`${dialect}: seeded ${rows.toLocaleString('en-US')} rows in ${seeded.seconds.toFixed(1)} s`);
    Bun.gc(true);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const watch = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const t0 = performance.now();
    const r = await fetch(`${backend.url}/projects/${project.id}/export.csv`, { headers: { 'service-api-key': backend.key } });
    if (r.status !== 200) throw new Error(`export answered ${r.status}: ${await r.text()}`);
    let lines = 0;
    let bytes = 0;
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      for (const b of value) if (b === 10) lines++;
    }
    const seconds = (performance.now() - t0) / 1000;
    clearInterval(watch);
    const mb = (n: number) => `${Math.round(n / 1048576)} MB`;
    console.log(
      `${dialect}: exported ${(lines - 1).toLocaleString('en-US')} rows (${mb(bytes)}) in ${seconds.toFixed(1)} s — ${Math.round((lines - 1) / seconds).toLocaleString('en-US')} rows/s; memory ${mb(baseline)} before, peak ${mb(peak)} (+${mb(peak - baseline)})`,
    );
  } finally {
    await backend.stop();
  }
}
