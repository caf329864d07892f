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
 * Loads companies `from` .. `from + count - 1` the way users do, over HTTP: most through
 * `POST rows/batch` (up to 1,000 rows per call, `concurrency` calls in flight), the last `singles`
 * through `POST rows` one at a time, 16 in flight. No statistics refresh follows: the listing must be
 * fast on the data as the service left it (an ANALYZE here once hid a plan that read whole projects).
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
  const singles = async () => {
    while (next < end) {
      const i = next++;
      await post('/rows', companyBody(columns, i));
      done += 1;
      report();
    }
  };
  await Promise.all(Array.from({ length: 16 }, singles));
  const seconds = (performance.now() - t0) / 1000;
  return { rows: count, seconds, rowsPerSecond: count / seconds };
}
