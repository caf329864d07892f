import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resumeUnfinishedWork } from '../core/handlers/resume-unfinished.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

const CSV = 'Name,Industry,Employees,Country\nAcme,Software,120,France\nGlobex,Retail,5000,USA\n';

describe.each(DIALECTS)('ICPs, batch rows and credits over REST on %s', (dialect) => {
  let t: TestService;
  let pid: string;
  beforeAll(async () => {
    t = await startTestService(dialect);
    pid = (await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } })).body.project_id;
    await waitForBuilder(t, pid);
  });
  afterAll(() => t.stop());

  const newIcp = async (definition: unknown = { industries: ['software'] }) =>
    (await t.api('POST', '/icps', { body: { name: 'Fit', definition } })).body;

  test('POST /icps answers 201 with the ICP; GET lists it (bare array) and reads it back', async () => {
    const r = await t.api('POST', '/icps', {
      body: { name: 'EU SaaS', definition: { industries: ['software'], employee_range: { min: 10, max: 1000 } } },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'EU SaaS', definition: { industries: ['software'], employee_range: { min: 10, max: 1000 } } });
    expect(r.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const list = await t.api('GET', '/icps');
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((i: any) => i.id)).toContain(r.body.id);
    expect((await t.api('GET', `/icps/${r.body.id}`)).body).toEqual(r.body);
  });

  test('PUT renames and replaces the definition; DELETE removes it (404 afterwards)', async () => {
    const icp = await newIcp();
    const put = await t.api('PUT', `/icps/${icp.id}`, { body: { name: 'Renamed', definition: { titles: ['CTO'] } } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'Renamed', definition: { titles: ['CTO'] } });
    expect(put.body.definition.industries).toBeUndefined();
    expect((await t.api('DELETE', `/icps/${icp.id}`)).body).toEqual({ deleted: true });
    expect((await t.api('GET', `/icps/${icp.id}`)).status).toBe(404);
    expect((await t.api('DELETE', `/icps/${icp.id}`)).status).toBe(404);
  });

  test('a bad definition is 422 naming the field', async () => {
    const unknown = await t.api('POST', '/icps', { body: { name: 'x', definition: { industry: ['software'] } } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail.errors[0].path).toBe('definition.industry');
    const range = await t.api('POST', '/icps', { body: { name: 'x', definition: { employee_range: { min: 500, max: 50 } } } });
    expect(range.status).toBe(422);
    expect(range.body.detail.message).toContain('min (500) is above max (50)');
  });

  test('another workspace’s ICP is 404 for reading, updating, deleting and scoring', async () => {
    const icp = await newIcp();
    const other = await t.newWorkspace();
    const h = { headers: { 'service-api-key': other.key } };
    expect((await t.api('GET', `/icps/${icp.id}`, h)).status).toBe(404);
    expect((await t.api('PUT', `/icps/${icp.id}`, { ...h, body: { name: 'mine now' } })).status).toBe(404);
    expect((await t.api('DELETE', `/icps/${icp.id}`, h)).status).toBe(404);
    expect((await t.api('POST', `/icps/${icp.id}/score`, { ...h, body: { project_id: pid } })).status).toBe(404);
    expect((await t.api('GET', '/icps', h)).body).toEqual([]);
    // Ownership comes first: a bad body on a foreign ICP still reads as missing.
    expect((await t.api('PUT', `/icps/${icp.id}`, { ...h, body: { nonsense: 1 } })).status).toBe(404);
    expect((await t.api('POST', `/icps/${icp.id}/score`, { ...h, body: {} })).status).toBe(404);
    // A score run reads as missing to another workspace, and under another ICP.
    const run = (await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid } })).body.run_id;
    expect((await t.api('GET', `/icps/${icp.id}/score/${run}`, h)).status).toBe(404);
    expect((await t.api('GET', `/icps/${(await newIcp()).id}/score/${run}`)).status).toBe(404);
    expect((await t.api('GET', `/icps/${icp.id}/score/${run}`)).status).toBe(200);
  });

  test('scoring writes a filterable score column; later rows are scored by the icp_score tool from the snapshot', async () => {
    const icp = await newIcp({ industries: ['software'], locations: ['France'] });
    const r = await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid, col_name: 'Fit' } });
    expect(r.status).toBe(200);
    // A small project is scored at once: the run is completed and the preview is the whole result.
    expect(r.body).toMatchObject({ icp_id: icp.id, project_id: pid, status: 'completed', rows_total: 2 });
    expect(r.body.preview).toMatchObject({ rows_considered: 2, partial: false, scored: 2, average_score: 50 });
    const run = await t.api('GET', `/icps/${icp.id}/score/${r.body.run_id}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      run_id: r.body.run_id,
      status: 'completed',
      rows_total: 2,
      rows_done: 2,
      scored: 2,
      average_score: 50,
      error_message: null,
    });
    expect(run.body.top).toEqual(r.body.preview.top);
    expect(run.body.column.col_id).toBe(r.body.column.col_id);
    expect(r.body.column).toMatchObject({ name: 'Fit', tool_id: 'icp_score', config: { icp_id: icp.id, definition: icp.definition } });
    const added = await t.api('POST', `/projects/${pid}/rows`, {
      body: { company: { Name: 'Initech', Industry: 'software', Employees: 9, Country: 'Germany' } },
    });
    await t.api('POST', `/projects/${pid}/columns/run`, { body: { col_ids: [r.body.column.col_id] } });
    const deadline = Date.now() + 10_000;
    let cell: any;
    do {
      cell = (await t.api('GET', `/projects/${pid}/rows/${added.body.row_id}`)).body.company.Fit;
      if (cell.status === 'completed') break;
      await Bun.sleep(25);
    } while (Date.now() < deadline);
    expect(cell).toEqual({ name: 'Fit', value: 63, status: 'completed', is_loading: false }); // software (25) of 40
    const sorted = await t.api(
      'GET',
      `/projects/${pid}/rows?sort_rules=${encodeURIComponent(JSON.stringify([{ col_id: r.body.column.col_id, direction: 'desc', sort_as_number: true }]))}`,
    );
    expect(sorted.body.rows.map((row: any) => row.company.Fit.value)).toEqual([100, 63, 0]);
    // Scoring again into the same column refreshes it.
    expect((await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid, col_name: 'Fit' } })).body.preview.scored).toBe(3);
  });

  test('a column scored with an older definition, or holding something else, is not overwritten', async () => {
    const icp = await newIcp();
    await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid, col_name: 'Old fit' } });
    await t.api('PUT', `/icps/${icp.id}`, { body: { definition: { industries: ['retail'] } } });
    const stale = await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid, col_name: 'Old fit' } });
    expect(stale.status).toBe(422);
    expect(stale.body.detail.message).toContain('earlier version');
    const input = await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid, col_name: 'Name' } });
    expect(input.status).toBe(422);
    const fresh = await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid } });
    expect(fresh.body.column).toBeNull();
    expect(fresh.body.preview.top[0].reasons[0]).toMatchObject({ criterion: 'industries', met: true });
  });

  /** A run stored as a previous process left it (nothing of it ran in this process). */
  const leftoverRun = async (icp: { id: string; definition: any }, projectId: string, status: 'queued' | 'running', rowsTotal: number) => {
    const { storage } = t.service.kernel;
    const project = (await storage.projects.get(t.workspaceId, projectId))!;
    return storage.icpScoreRuns.create({
      id: crypto.randomUUID(),
      workspaceId: t.workspaceId,
      icpId: icp.id,
      projectPk: project.pk,
      projectId,
      colNo: null,
      definition: icp.definition,
      status,
      rowsTotal,
      rowsDone: 0,
      afterSeq: 0,
      tally: { scored: 0, sum: 0, top: [] },
      error: null,
    });
  };

  /** Polls a score run until it reaches `status` (or 10 s pass) and answers its view. */
  const runView = async (icpId: string, runId: string, status: string) => {
    let view: any;
    const deadline = Date.now() + 10_000;
    do {
      await Bun.sleep(25);
      view = (await t.api('GET', `/icps/${icpId}/score/${runId}`)).body;
    } while (view.status !== status && Date.now() < deadline);
    return view;
  };

  test('a score run left unfinished by a previous process is resumed from its checkpoint', async () => {
    const icp = await newIcp();
    const { storage } = t.service.kernel;
    const project = (await storage.projects.get(t.workspaceId, pid))!;
    const rows = (await storage.rows.counts([project.pk])).get(project.pk) ?? 0;
    const run = await leftoverRun(icp, pid, 'running', rows);
    await resumeUnfinishedWork(t.service.kernel);
    const view = await runView(icp.id, run.id, 'completed');
    expect(view).toMatchObject({ status: 'completed', rows_total: rows, rows_done: rows, scored: rows, error_message: null });
  });

  test('a score run whose project was deleted ends failed, saying so', async () => {
    const icp = await newIcp();
    const other = (await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: CSV } } })).body
      .project_id;
    await waitForBuilder(t, other);
    const run = await leftoverRun(icp, other, 'queued', 2);
    expect((await t.api('DELETE', `/projects/${other}`)).status).toBe(200);
    await resumeUnfinishedWork(t.service.kernel);
    const view = await runView(icp.id, run.id, 'failed');
    expect(view).toMatchObject({ status: 'failed', column: null, error_message: 'the project was deleted while it was being scored' });
  });

  test('an ICP without criteria cannot score', async () => {
    const icp = await newIcp({});
    expect((await t.api('POST', `/icps/${icp.id}/score`, { body: { project_id: pid } })).status).toBe(422);
  });

  test('POST rows/batch adds every row (201) or, when one is bad, none (403 naming its index)', async () => {
    const before = (await t.api('GET', `/projects/${pid}`)).body.row_count;
    const ok = await t.api('POST', `/projects/${pid}/rows/batch`, {
      body: {
        rows: [
          { Name: 'A', Industry: null, Employees: 1, Country: null },
          { Name: 'B', Industry: null, Employees: 2, Country: null },
        ],
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.created).toBe(2);
    expect((await t.api('GET', `/projects/${pid}/rows/${ok.body.row_ids[1]}`)).body.company.Name.value).toBe('B');
    const bad = await t.api('POST', `/projects/${pid}/rows/batch`, {
      body: {
        rows: [
          { Name: 'C', Industry: null, Employees: 3, Country: null },
          { Name: 'D', Fit: 5, Industry: null, Employees: 4, Country: null },
        ],
      },
    });
    expect(bad.status).toBe(403);
    expect(bad.body.detail.row_index).toBe(1);
    expect(bad.body.detail.message).toStartWith('rows[1]:');
    expect((await t.api('GET', `/projects/${pid}`)).body.row_count).toBe(before + 2);
    expect((await t.api('POST', `/projects/${pid}/rows/batch`, { body: { rows: [] } })).status).toBe(403);
  });

  test('GET /credits reports the balance from the ledger, the plan and API access', async () => {
    await t.service.kernel.storage.credits.grant(t.workspaceId, 40, { note: 'test' });
    const r = await t.api('GET', '/credits');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ plan: 'pro', api_access: true, usage: expect.any(Array) });
    expect(r.body.balance).toBe(await t.service.kernel.storage.credits.balance(t.workspaceId));
  });
});

test('POST rows/batch respects the plan’s rows per project, all or none', async () => {
  const t = await startTestService('sqlite', { PLANS_JSON: JSON.stringify({ pro: { maxRowsPerProject: 3 } }) });
  try {
    const pid = (await t.api('POST', '/projects', { body: { builder_id: 'manual_list_builder', form_data: { companies: 'Acme' } } })).body
      .project_id;
    await waitForBuilder(t, pid);
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ Name: `R${i}`, Domain: null }));
    const over = await t.api('POST', `/projects/${pid}/rows/batch`, { body: { rows: rows(3) } });
    expect(over.status).toBe(403);
    expect(over.body.detail).toMatchObject({ code: 'quota_exceeded', quota: 'rows_per_project', limit: 3 });
    expect((await t.api('GET', `/projects/${pid}`)).body.row_count).toBe(1);
    expect((await t.api('POST', `/projects/${pid}/rows/batch`, { body: { rows: rows(2) } })).status).toBe(201);
  } finally {
    await t.stop();
  }
});
