import type { Column, Project } from '../../core/model.ts';
import type { Storage } from '../../core/storage.ts';
import { BENCH_COLUMNS, companyCells } from './rows-dataset.ts';

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
