import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MAX_COLUMNS_PER_PROJECT } from '../core/columns/column-names.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/** What a request may ask of the request path is bounded and checked in one pass (the hostile review's wide header, reserved names). */
describe.each(DIALECTS)('bounded request work on %s', (dialect) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService(dialect);
  });
  afterAll(() => t.stop());

  const wideHeader = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(',');

  test('a 150,000-column CSV header (1.4 MB) is refused with the column limit, as text (400) and as an upload (422); nothing is stored', async () => {
    const before = (await t.api('GET', '/projects')).body.total ?? (await t.api('GET', '/projects')).body.projects?.length;
    const csv = `${wideHeader(150_000)}\n${'x,'.repeat(149_999)}x\n`;
    const other = await t.newWorkspace();
    // Another tenant keeps being answered while the wide header is checked.
    const beside = (async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await t.api('GET', '/projects', { headers: { 'service-api-key': other.key } })).status);
      return statuses;
    })();
    const asText = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    expect(asText.status).toBe(400); // POST /projects answers a form the builder refuses with 400 (the spec)
    expect(asText.body.detail.message).toContain(`at most ${MAX_COLUMNS_PER_PROJECT.toLocaleString('en-US')} columns`);
    const asFile = await fetch(`${t.url}/projects/import.csv`, {
      method: 'POST',
      headers: { 'service-api-key': t.key, 'content-type': 'text/csv' },
      body: csv,
    });
    expect(asFile.status).toBe(422);
    // The upload route stops at the first line's length (64 KiB) before parsing anything.
    expect(((await asFile.json()) as any).detail.message).toMatch(/columns|first line is longer/);
    const besideStatuses = await beside;
    expect(besideStatuses.filter((s) => s !== 200)).toEqual([]);
    const after = (await t.api('GET', '/projects')).body.total ?? (await t.api('GET', '/projects')).body.projects?.length;
    expect(after).toBe(before);
    // At the limit it is a project.
    const widest = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: `${wideHeader(MAX_COLUMNS_PER_PROJECT)}\n` } },
    });
    expect(widest.status).toBe(201);
    const one = await t.api('POST', `/projects/${widest.body.project_id}/columns`, {
      body: { name: 'One more', tool_id: 'formula', config: { expression: '1' } },
    });
    expect(one.status).toBe(422);
  });

  test('a body nested a million levels deep is refused in one pass (REST and inbound URLs), never a 500', async () => {
    const made = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nAcme' } } });
    const pid = made.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=10`);
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    const headers = { 'service-api-key': t.key, 'content-type': 'application/json' };
    const rest = await t.api('POST', `/projects/${pid}/rows`, { rawBody: `{"company":{"Name":${deep}}}`, headers });
    expect(rest.status).toBeGreaterThanOrEqual(400);
    expect(rest.status).toBeLessThan(500);
    expect(JSON.stringify(rest.body)).toContain('deeper than 64 levels');
    const inbound = (await t.api('POST', `/projects/${pid}/inbound`, { body: {} })).body.url as string;
    const viaUrl = await fetch(inbound, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"Name":${deep}}` });
    expect(viaUrl.status).toBe(422);
    expect(JSON.stringify(await viaUrl.json())).toContain('deeper than 64 levels');
    // Sixty-four levels are fine: a cell may hold a nested record.
    const ok = `${'['.repeat(60)}1${']'.repeat(60)}`;
    expect((await t.api('POST', `/projects/${pid}/rows`, { rawBody: `{"company":{"Name":${ok}}}`, headers })).status).toBe(201);
    // An inbound body's numbers are read exactly, as on POST rows.
    const rounded = await fetch(inbound, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"Name":12345678901234567890}',
    });
    expect(rounded.status).toBe(422);
  });

  test('__proto__, constructor and prototype cannot name a column: a clear refusal, never a dropped value or a 500', async () => {
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const made = await t.api('POST', '/projects', {
        body: { builder_id: 'csv_import_builder', form_data: { csv_text: `Name,${name}\nAcme,1` } },
      });
      expect(made.status).toBe(400);
      expect(made.body.detail.message).toContain(`"${name}" cannot name a column`);
    }
    const ok = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nAcme' } } });
    await t.api('GET', `/projects/${ok.body.project_id}/wait?wait_seconds=10`);
    const col = await t.api('POST', `/projects/${ok.body.project_id}/columns`, {
      body: { name: 'constructor', tool_id: 'formula', config: { expression: 'Name' } },
    });
    expect(col.status).toBe(422);
    expect(JSON.stringify(col.body.detail)).toContain('cannot name a column');
    // As keys of a row they name no column: refused by name, not dropped.
    const row = await t.api('POST', `/projects/${ok.body.project_id}/rows`, {
      rawBody: '{"company":{"Name":"X","__proto__":"y"}}',
      headers: { 'service-api-key': t.key, 'content-type': 'application/json' },
    });
    expect(row.status).toBe(403);
    expect(row.body.detail.message).toContain('no column is named "__proto__"');
  });
});

/** Event streams and waits hold a connection each: bounded per workspace, with room kept for the others. */
describe('open event streams and waits per workspace', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService('sqlite', { MAX_STREAMS_PER_WORKSPACE: '3', MAX_OPEN_STREAMS: '5' });
  });
  afterAll(() => t.stop());

  const project = async (key: string) => {
    const made = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nAcme' } },
      headers: { 'service-api-key': key },
    });
    await t.api('GET', `/projects/${made.body.project_id}/wait?wait_seconds=10`, { headers: { 'service-api-key': key } });
    return made.body.project_id as string;
  };
  const open = async (key: string, id: string) => {
    const abort = new AbortController();
    const res = await fetch(`${t.url}/projects/${id}/events`, { headers: { 'service-api-key': key }, signal: abort.signal });
    if (res.status !== 200) await res.text();
    return { status: res.status, retryAfter: res.headers.get('retry-after'), close: () => abort.abort() };
  };

  test('a workspace past its cap gets 429 with Retry-After (streams and waits); others still connect; closing frees a place', async () => {
    const b = await t.newWorkspace();
    const c = await t.newWorkspace();
    const pa = await project(t.key);
    const pb = await project(b.key);
    const pc = await project(c.key);
    const mine = [await open(t.key, pa), await open(t.key, pa), await open(t.key, pa)];
    expect(mine.map((s) => s.status)).toEqual([200, 200, 200]);
    const fourth = await open(t.key, pa);
    expect(fourth.status).toBe(429);
    expect(fourth.retryAfter).toBe('5');
    const wait = await t.api('GET', `/projects/${pa}/wait?wait_seconds=5`);
    expect(wait.status).toBe(429);
    expect(wait.body.detail.message).toContain('this workspace has 3 open');
    // Another workspace is not held back by A's streams…
    const theirs = [await open(b.key, pb), await open(b.key, pb)];
    expect(theirs.map((s) => s.status)).toEqual([200, 200]);
    // …until the process as a whole is at its cap.
    expect((await open(c.key, pc)).status).toBe(429);
    mine[0]?.close();
    await Bun.sleep(100);
    const again = await open(t.key, pa);
    expect(again.status).toBe(200);
    for (const s of [...mine, ...theirs, again]) s.close();
  });
});
