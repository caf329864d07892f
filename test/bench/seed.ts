import type { Column, Project } from '../../core/model.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { BENCH_COLUMNS, companyBody, companyCells } from './rows-dataset.ts';

/** Seeding goes straight through the storage layer (no HTTP): a project, then big row batches. */

export async function createBenchProject(
  storage: Storage,
  workspaceId: string,
  name: string,
): Promise<{ project: Project; columns: Column[] }> {
  const project = await storage.projects.create({
    workspaceId,
    creatorId: 'bench',
    name,
    builderId: null,
    formData: null,
    columns: BENCH_COLUMNS,
  });
  return { project, columns: await storage.projects.columns(project.pk) };
}

export interface SeedResult {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** The single POSTs of the load, when it had some: their rate and each POST's latency. */
  singles?: { rows: number; rowsPerSecond: number; p50Ms: number; p95Ms: number };
}

/**
 * Inserts companies `from` .. `from + count - 1` with `RowRepo.insert`, `batch` rows per call and
 * up to `concurrency` calls in flight (SQLite serialises them anyway; MariaDB overlaps them).
 */
export async function seedRows(
  storage: Storage,
  projectPk: number,
  columns: Column[],
  from: number,
  count: number,
  options: { batch: number; concurrency: number; label: string },
): Promise<SeedResult> {
  const t0 = performance.now();
  let next = from;
  const end = from + count;
  let done = 0;
  let lastReport = t0;
  const worker = async () => {
    while (next < end) {
      const start = next;
      const n = Math.min(options.batch, end - start);
      next += n;
      const cells = Array.from({ length: n }, (_, k) => companyCells(columns, start + k));
      await storage.rows.insert(projectPk, columns, cells);
      done += n;
      const now = performance.now();
      if (now - lastReport > 10_000) {
        lastReport = now;
        const rate = Math.round(done / ((now - t0) / 1000));
        process.stderr.write(
          `  ${options.label}: ${done.toLocaleString('en-US')} / ${count.toLocaleString('en-US')} rows (${rate.toLocaleString('en-US')} rows/s)\n`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { rows: count, seconds, rowsPerSecond: count / seconds };
}

/**
 * Loads companies `from` .. `from + count - 1` the way users do, over HTTP: the last `singles`
 * (by default all) through `POST rows` one row per call in waves of 16 — each wave waiting for the
 * one before, as an app or an inbound URL fills a table — and the rest first through
 * `POST rows/batch` (up to 1,000 rows per call, `concurrency` calls in flight). No statistics
 * refresh follows: the listing must be fast on the data as the service left it (an ANALYZE here
 * once hid a plan that read whole projects).
 */
export async function seedOverHttp(
  api: { url: string; key: string },
  projectId: string,
  columns: Column[],
  from: number,
  count: number,
  options: { batch: number; concurrency: number; singles: number; label: string },
): Promise<SeedResult> {
  const t0 = performance.now();
  const headers = { 'service-api-key': api.key, accept: 'application/json', 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${api.url}/projects/${projectId}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  };
  const end = from + count;
  const batchEnd = end - Math.min(options.singles, count);
  let next = from;
  let done = 0;
  let lastReport = t0;
  const report = () => {
    const now = performance.now();
    if (now - lastReport < 10_000) return;
    lastReport = now;
    const rate = Math.round(done / ((now - t0) / 1000));
    process.stderr.write(
      `  ${options.label}: ${done.toLocaleString('en-US')} / ${count.toLocaleString('en-US')} rows over HTTP (${rate.toLocaleString('en-US')} rows/s)\n`,
    );
  };
  const batches = async () => {
    while (next < batchEnd) {
      const start = next;
      const n = Math.min(options.batch, 1_000, batchEnd - start);
      next += n;
      await post('/rows/batch', { rows: Array.from({ length: n }, (_, k) => companyBody(columns, start + k).company) });
      done += n;
      report();
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, batches));
  const tSingles = performance.now();
  const latencies: number[] = [];
  const single = async (i: number) => {
    const t = performance.now();
    await post('/rows', companyBody(columns, i));
    latencies.push(performance.now() - t);
    done += 1;
  };
  for (let i = batchEnd; i < end; i += 16) {
    await Promise.all(Array.from({ length: Math.min(16, end - i) }, (_, k) => single(i + k)));
    report();
  }
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const singleRows = end - batchEnd;
  const singleSeconds = (performance.now() - tSingles) / 1000;
  const singles =
    singleRows > 0 ? { rows: singleRows, rowsPerSecond: singleRows / singleSeconds, p50Ms: at(0.5), p95Ms: at(0.95) } : undefined;
  return { rows: count, seconds, rowsPerSecond: count / seconds, ...(singles ? { singles } : {}) };
}
