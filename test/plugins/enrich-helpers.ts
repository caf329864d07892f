import { expect } from 'bun:test';
import { type TestService, waitForBuilder } from '../support/test-service.ts';

/** Time limit of a beforeAll that starts a service: the first MariaDB start can outlast bun's 5 s default. */
export const SERVICE_START_MS = 60_000;

/** Creates a project from CSV text and waits for its rows. */
export async function csvProject(t: TestService, csv: string): Promise<string> {
  const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
  expect(r.status).toBe(201);
  await waitForBuilder(t, r.body.project_id);
  return r.body.project_id;
}

/** Adds a tool column (expects 201) and answers its id. */
export async function addColumn(t: TestService, pid: string, name: string, tool_id: string, config: unknown): Promise<string> {
  const r = await t.api('POST', `/projects/${pid}/columns`, { body: { name, tool_id, config } });
  if (r.status !== 201) throw new Error(`POST columns answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.col_id;
}

/**
 * Polls the rows until no cell is queued or running and two reads in a row agree. (The second read:
 * the row listing reads statuses and values in two statements, so a read racing the final write
 * can show a cell's new status beside its old value; the host's storage is not ours to change.)
 */
export async function settledRows(t: TestService, pid: string, timeoutMs = 15_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  let previous = '';
  for (;;) {
    const r = await t.api('GET', `/projects/${pid}/rows?page_size=100`);
    const loading = r.body.rows.some((row: any) => Object.values(row.company).some((c: any) => c.is_loading));
    const snapshot = JSON.stringify(r.body.rows);
    if (!loading && snapshot === previous) return r.body.rows;
    previous = loading ? '' : snapshot;
    if (Date.now() > deadline) throw new Error(`cells still loading after ${timeoutMs} ms`);
    await Bun.sleep(25);
  }
}

/** Runs these columns (run_pending_columns) and answers the settled rows. */
export async function runColumns(t: TestService, pid: string, colIds: string[], timeoutMs?: number): Promise<any[]> {
  const r = await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: colIds } });
  expect(r.status).toBe(200);
  return settledRows(t, pid, timeoutMs);
}

/** The cell of column `col` in the row whose column `keyCol` holds `key`. */
export function cellOf(rows: any[], keyCol: string, key: string, col: string): { value: any; status: string; error?: string } {
  const row = rows.find((r) => r.company[keyCol]?.value === key);
  if (!row) throw new Error(`no row with ${keyCol} = ${key}`);
  return row.company[col];
}

/** Sets process.env variables (undefined deletes); answers a function that restores the old values. */
export function setEnv(vars: Record<string, string | undefined>): () => void {
  const old = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, val] of Object.entries(v)) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  };
  apply(vars);
  return () => apply(old);
}
