import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { DIALECTS, freshDatabaseUrl, queueEnv } from './support/databases.ts';
import { openSse, type SseStream } from './support/sse.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * GET /projects/{id}/events (docs/console.md): what a watcher sees while a builder runs, a column fills and
 * rows come and go; resuming with Last-Event-ID; refusals. On MariaDB the jobs run in a separate
 * `bun run worker` process and its events reach the API process through Redis.
 */

const ROOT = resolve(import.meta.dir, '..');

describe.each(DIALECTS)('project events on %s', (dialect) => {
  let t: TestService;
  let worker: Subprocess | undefined;
  const streams: SseStream[] = [];
  const watch = async (projectId: string, headers: Record<string, string> = {}, query = '') => {
    const s = await openSse(`${t.url}/projects/${projectId}/events${query}`, { 'service-api-key': t.key, ...headers });
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    const env = { ...(await queueEnv(dialect)), DATABASE_URL: await freshDatabaseUrl(dialect) };
    t = await startTestService(dialect, { ...env, ...(dialect === 'mysql' ? { WORKERS: '0' } : {}) });
    if (dialect === 'mysql') {
      worker = Bun.spawn(['bun', 'app/worker.ts'], {
        cwd: ROOT,
        env: { ...process.env, ...env, PROVIDER_MODE: 'sandbox', LOG_LEVEL: 'warn', JOB_BACKOFF_MS: '50' },
        stdout: 'ignore',
        stderr: 'ignore',
      });
    }
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    worker?.kill('SIGTERM');
    await worker?.exited;
    await t.stop();
  });

  async function newProject(rows: number) {
    const csv = `Name\n${Array.from({ length: rows }, (_, i) => `Company ${i}`).join('\n')}`;
    const r = await t.api('POST', '/projects', { body: { builder_id: 'csv_import_builder', form_data: { csv_text: csv } } });
    expect(r.status).toBe(201);
    return r.body.project_id as string;
  }

  test('a watcher of a new project sees its builder run to the end and every row it wrote (Last-Event-ID 0-0)', async () => {
    const id = await newProject(120);
    const s = await watch(id, { 'last-event-id': '0-0' });
    expect(s.status).toBe(200);
    const done = await s.waitFor((e) => e.event === 'builder' && e.data.builder_status.type === 'completed');
    expect(done.id).toMatch(/^\d+-\d+$/);
    const added = s.events.filter((e) => e.event === 'rows').reduce((n, e) => n + e.data.added, 0);
    expect(added).toBe(120);
    // Ids increase.
    const ids = s.events.map((e) => e.id as string);
    expect(
      [...ids].sort((a, b) => Number(a.split('-')[0]) - Number(b.split('-')[0]) || Number(a.split('-')[1]) - Number(b.split('-')[1])),
    ).toEqual(ids);
  });

  test('a column filling shows each cell queued, then completed with its value; a new row shows as added', async () => {
    const id = await newProject(5);
    for (let i = 0; i < 200 && (await t.api('GET', `/projects/${id}`)).body.builder_status.type !== 'completed'; i++) await Bun.sleep(25);
    const s = await watch(id);
    const col = await t.api('POST', `/projects/${id}/columns`, {
      body: { name: 'Upper', tool_id: 'formula', config: { expression: '$uppercase(Name)' } },
    });
    expect(col.status).toBe(201);
    await s.waitFor((e) => e.event === 'columns');
    expect((await t.api('POST', `/projects/${id}/columns/run`, { body: { col_ids: [col.body.col_id] } })).status).toBe(200);
    const rows = (await t.api('GET', `/projects/${id}/rows?page_size=10`)).body.rows as any[];
    const completed = new Map<string, unknown>();
    await s.waitFor((e) => {
      if (e.event === 'cells' && e.data.col_id === col.body.col_id)
        for (const c of e.data.cells) if (c.status === 'completed') completed.set(c.row_id, c.value);
      return completed.size === 5;
    });
    for (const r of rows) expect(completed.get(String(r.id))).toBe(String(r.company.Name.value).toUpperCase());
    const queued = s.events.find((e) => e.event === 'cells' && e.data.cells.some((c: any) => c.status === 'queued'));
    expect(queued?.data.col_id).toBe(col.body.col_id);
    expect(queued?.data.cells[0]).not.toHaveProperty('value'); // a status move carries no value
    const added = await t.api('POST', `/projects/${id}/rows`, { body: { company: { Name: 'Late' } } });
    expect(added.status).toBe(201);
    await s.waitFor((e) => e.event === 'rows' && e.data.added === 1);
  });

  test('Last-Event-ID resumes right after the last event seen; an id older than anything kept is a reset', async () => {
    const id = await newProject(3);
    for (let i = 0; i < 200 && (await t.api('GET', `/projects/${id}`)).body.builder_status.type !== 'completed'; i++) await Bun.sleep(25);
    const first = await watch(id, { 'last-event-id': '0-0' });
    const seen = await first.waitFor((e) => e.event === 'builder' && e.data.builder_status.type === 'completed');
    const lastSeen = first.events[first.events.length - 1]?.id as string;
    expect(lastSeen).toBe(seen.id as string);
    first.close();
    // While nobody watches, two rows arrive.
    for (const name of ['Away 1', 'Away 2'])
      expect((await t.api('POST', `/projects/${id}/rows`, { body: { company: { Name: name } } })).status).toBe(201);
    const again = await watch(id, { 'last-event-id': lastSeen });
    await again.waitFor((e) => e.event === 'rows' && e.data.added === 1 && again.events.filter((x) => x.event === 'rows').length === 2);
    expect(again.events.map((e) => e.event)).toEqual(['rows', 'rows']);
    // The same resume through the query, as a browser's EventSource can send it.
    const viaQuery = await watch(id, {}, `?last_event_id=${lastSeen}`);
    await viaQuery.waitFor((e) => e.event === 'rows' && viaQuery.events.length === 2);
    const old = await watch(id, { 'last-event-id': '1-0' });
    const reset = await old.waitFor((e) => e.event === 'reset');
    expect(reset.data.detail).toContain('read the project');
  });

  test('refusals: no credentials 401, another workspace 404, a malformed Last-Event-ID 422', async () => {
    const id = await newProject(1);
    const anonymous = await fetch(`${t.url}/projects/${id}/events`);
    expect(anonymous.status).toBe(401);
    const other = await t.newWorkspace();
    const foreign = await fetch(`${t.url}/projects/${id}/events`, { headers: { 'service-api-key': other.key } });
    expect(foreign.status).toBe(404);
    expect(((await foreign.json()) as any).detail).toContain('not found');
    const bad = await fetch(`${t.url}/projects/${id}/events`, { headers: { 'service-api-key': t.key, 'last-event-id': 'yesterday' } });
    expect(bad.status).toBe(422);
  });

  test('when the process starts draining (SIGTERM), its streams end so clients reconnect elsewhere', async () => {
    const id = await newProject(1);
    const s = await watch(id);
    t.service.kernel.lifecycle.draining = true;
    try {
      const ended = await Promise.race([s.ended.then(() => 'ended'), Bun.sleep(3_000).then(() => 'still open')]);
      expect(ended).toBe('ended');
    } finally {
      t.service.kernel.lifecycle.draining = false;
    }
  });

  test('the stream is in the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/docs/json')).body;
    const op = doc.paths['/api/enterprise/projects/{project_id}/events']?.get;
    expect(op?.operationId).toBe('watch_project_events');
    expect(Object.keys(op.responses[200].content)).toEqual(['text/event-stream']);
  });
});
