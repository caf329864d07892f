import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { scoreRow } from '../core/icp/score.ts';
import type { Cell, Column } from '../core/model.ts';
import { DIALECTS } from './support/databases.ts';
import { percentile, probeLatency } from './support/latency-probe.ts';
import { enc, startTestService, type TestService } from './support/test-service.ts';

/**
 * score_icp over a large project runs as a job: the request answers at once with a run and a
 * bounded preview, the scores reach the column page by page, and the rest of the service keeps
 * answering meanwhile.
 */

const ROWS = 100_000;
const INDUSTRIES = ['Software', 'Retail', 'Health', 'Finance'];
const COUNTRIES = ['France', 'USA', 'Germany'];
const DEFINITION = { industries: ['software'], locations: ['France'] };
const company = (i: number) => ({ Name: `Company ${i}`, Industry: INDUSTRIES[i % 4], Country: COUNTRIES[i % 3] });

describe.each(DIALECTS)('score_icp over 100,000 rows on %s', (dialect) => {
  let t: TestService;
  let pid: string;
  beforeAll(async () => {
    // The probe calls far more often than a plan's per-key rate allows.
    t = await startTestService(dialect, { PLANS_JSON: JSON.stringify({ pro: { requestsPerMinute: null } }) });
    // Seeded through the storage layer: quick, and the same rows an import would write.
    const { storage } = t.service.kernel;
    const project = await storage.projects.create({
      workspaceId: t.workspaceId,
      creatorId: t.workspaceId,
      name: 'Big',
      builderId: null,
      formData: null,
      columns: ['Name', 'Industry', 'Country'].map((name) => ({ name, type: 'input' as const })),
    });
    pid = project.id;
    const columns = await storage.projects.columns(project.pk);
    const cells = (i: number): Record<number, Cell> => {
      const values = company(i) as Record<string, unknown>;
      return Object.fromEntries(columns.map((c: Column) => [c.no, { v: values[c.name] }]));
    };
    for (let from = 0; from < ROWS; from += 10_000) {
      await Promise.all(
        [0, 2_000, 4_000, 6_000, 8_000].map((o) =>
          storage.rows.insert(
            project.pk,
            columns,
            Array.from({ length: 2_000 }, (_, k) => cells(from + o + k)),
          ),
        ),
      );
    }
  }, 60_000);
  let stopProbe = async (): Promise<unknown> => undefined;
  afterAll(async () => {
    await stopProbe(); // a failed test must not leave the probe calling a stopped service
    await t.stop();
  });

  test('answers at once with a queued run and a preview of the first 1,000 rows; GET /projects stays fast; every score is written', async () => {
    const icp = (await t.api('POST', '/icps', { body: { name: 'FR software', definition: DEFINITION } })).body;
    const probe = probeLatency(() => t.api('GET', '/projects'));
    stopProbe = () => probe.stop();
    const t0 = performance.now();
    const r = await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid, col_name: 'Fit' } });
    const answeredMs = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      icp_id: icp.id,
      project_id: pid,
      status: 'queued',
      rows_total: ROWS,
      column: { name: 'Fit', tool_id: 'icp_score' },
    });
    expect(r.body.preview).toMatchObject({ rows_considered: 1_000, partial: true, scored: 1_000 });
    expect(r.body.preview.top).toHaveLength(25);
    expect(r.body.preview.top[0].score).toBe(100);

    // Rows not scored yet show the cell as waiting.
    const last = await t.api('GET', `/projects/${pid}/rows?page=${ROWS / 50}&page_size=50`);
    expect(last.body.rows.at(-1).company.Fit).toMatchObject({ status: 'queued', is_loading: true });

    let run: any;
    const deadline = Date.now() + 60_000;
    do {
      await Bun.sleep(100);
      run = (await t.api('GET', `/icps/${icp.id}/score/${r.body.run_id}`)).body;
    } while (!['completed', 'failed'].includes(run.status) && Date.now() < deadline);
    const samples = await probe.stop();

    expect(run).toMatchObject({ status: 'completed', rows_total: ROWS, rows_done: ROWS, scored: ROWS, error_message: null });
    let sum = 0;
    for (let i = 0; i < ROWS; i++) sum += scoreRow(DEFINITION, company(i)).score as number;
    expect(run.average_score).toBe(Math.round((sum / ROWS) * 10) / 10);
    expect(run.top).toHaveLength(25);
    expect(run.top.every((m: any) => m.score === 100)).toBe(true);

    // Every cell of the column is written and completed.
    const col = r.body.column.col_id;
    const notDone = await t.api(
      'GET',
      `/projects/${pid}/rows?page_size=1&filter_groups=${enc([{ type: 'and', rules: [{ col_id: col, operator: 'neq', value: 'completed', field: 'status' }] }])}`,
    );
    expect(notDone.body.total_rows).toBe(0);
    const hundreds = await t.api(
      'GET',
      `/projects/${pid}/rows?page_size=1&filter_groups=${enc([{ type: 'and', rules: [{ col_id: col, operator: 'eq', value: 100 }] }])}`,
    );
    expect(hundreds.body.total_rows).toBe(Math.ceil(ROWS / 12)); // Software (i % 4 = 0) in France (i % 3 = 0)

    const p99 = percentile(samples, 99);
    console.log(
      `${dialect}: score run of ${ROWS} rows, GET /projects ×${samples.length} p50 ${percentile(samples, 50).toFixed(1)} p90 ${percentile(samples, 90).toFixed(1)} p99 ${p99.toFixed(1)} ms (max ${Math.max(...samples).toFixed(1)}), POST answered in ${answeredMs.toFixed(0)} ms`,
    );
    // Requests kept being answered all along; how fast is bun run bench:embedded's figure, not a test's.
    expect(samples.length).toBeGreaterThan(50);
  }, 90_000);
});
