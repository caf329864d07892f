import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { DIALECTS } from '../support/databases.ts';
import { until } from '../support/until.ts';
import { type McpTestService, rpc, startMcpTestService } from './mcp-support.ts';

/**
 * MCP Tasks (`io.modelcontextprotocol/tasks`) in the 2026-07-28 era (docs/mcp.md): a client that
 * declares the extension gets a task for run_builder and run_pending_columns, polls tasks/get for
 * progress and the result, and cancels with tasks/cancel (rows written stay, the reservation of
 * rows not written comes back, cells not started go back to pending). A task is its workspace's only.
 */

const FIXTURE_PLUGINS = resolve(import.meta.dir, '../fixtures/plugins');
const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

function envelope(tasks: boolean) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'tasks-tests', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
  };
}

describe.each(DIALECTS)('MCP tasks on %s', (dialect) => {
  let t: McpTestService;
  let id = 0;
  /** One modern-era request; answers its JSON-RPC result (or throws its error). */
  async function request(method: string, params: Record<string, unknown>, o: { name?: string; tasks?: boolean; key?: string } = {}) {
    const res = await rpc(
      t.mcpUrl,
      { jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: envelope(o.tasks ?? true) } },
      {
        'service-api-key': o.key ?? t.key,
        'mcp-protocol-version': MODERN,
        'mcp-method': method,
        ...(o.name ? { 'mcp-name': o.name } : {}),
      },
    );
    const body = await res.json();
    if (body.error) throw Object.assign(new Error(body.error.message), { code: body.error.code });
    return body.result;
  }
  const tool = (name: string, args: Record<string, unknown>, o: { tasks?: boolean } = {}) =>
    request('tools/call', { name, arguments: args }, { name, ...o });
  const envelopeOf = (result: { content: { text: string }[] }) => JSON.parse(result.content[0]?.text ?? 'null');
  const rowsOf = async (projectId: string) =>
    envelopeOf(await tool('get_project_rows', { project_id: projectId, page_size: 1 }, { tasks: false })).data.total_rows as number;
  const balance = async () => envelopeOf(await tool('get_credits', {}, { tasks: false })).data.balance as number;

  beforeAll(async () => {
    t = await startMcpTestService(dialect, { PLUGINS_DIR: FIXTURE_PLUGINS, WORKER_CONCURRENCY: '2' });
  });
  afterAll(() => t.stop());

  test('discover names the extension; a builder run is a task polled to its result', async () => {
    const discovered = await request('server/discover', {});
    expect(discovered.capabilities.extensions[TASKS]).toBeDefined();
    const handle = await tool('run_builder', {
      builder_id: 'slow_builder',
      form_data_json: JSON.stringify({ pages: 3, delay_ms: 150, cursor: true }),
    });
    expect(handle.resultType).toBe('task');
    expect(handle.status).toBe('working');
    expect(handle.ttlMs).toBeGreaterThan(0);
    const seen: string[] = [];
    const done = await until(async () => {
      const task = await request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId });
      seen.push(task.statusMessage);
      return task.status === 'completed' ? task : undefined;
    }, 60_000);
    expect(seen.some((m) => /rows written/.test(m))).toBe(true);
    const result = envelopeOf(done.result);
    expect(result.ok).toBe(true);
    expect(await rowsOf(result.data.project_id)).toBe(30);
  });

  test('without the extension declared the same call answers as before (no task)', async () => {
    const answer = await tool(
      'run_builder',
      { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Acme"}' },
      { tasks: false },
    );
    expect(answer.resultType).toBe('complete');
    expect(envelopeOf(answer).data.project_id).toBeString();
  });

  test('a cancelled builder run stops: its rows stay, the credits of rows not written come back', async () => {
    const before = await balance();
    const handle = await tool('run_builder', {
      builder_id: 'slow_builder',
      form_data_json: JSON.stringify({ pages: 40, delay_ms: 150, cursor: true }),
    });
    const task = await until(async () => {
      const now = await request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId });
      return /\b[1-9]\d* of 400 rows written/.test(now.statusMessage) ? now : undefined;
    }, 60_000);
    expect(task.status).toBe('working');
    const ack = await request('tasks/cancel', { taskId: handle.taskId }, { name: handle.taskId });
    expect(ack).toMatchObject({ resultType: 'complete' });
    expect(ack.taskId).toBeUndefined(); // an empty acknowledgement: the status shows in tasks/get
    const cancelled = await request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId });
    expect(cancelled.status).toBe('cancelled');
    const projectId = cancelled._meta['workflow-service/project_id'];
    expect(projectId).toBe(handle._meta['workflow-service/project_id']);
    // Cancelling again, once it ended, is the same acknowledgement.
    expect(await request('tasks/cancel', { taskId: handle.taskId }, { name: handle.taskId })).toMatchObject({ resultType: 'complete' });
    // The run stops: the rows stop growing, short of the 400 asked for.
    let last = -1;
    const settled = await until(async () => {
      await Bun.sleep(600);
      const n = await rowsOf(projectId);
      const same = n === last;
      last = n;
      return same ? n : undefined;
    }, 30_000);
    expect(settled).toBeLessThan(400);
    // 1 credit per row: only the rows written are paid for.
    expect(await until(async () => ((await balance()) === before - settled ? true : undefined), 20_000)).toBe(true);
    expect((await request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId })).status).toBe('cancelled');
  });

  test('a column run is a task with cells ended of total; cancelled, the cells not started go back to pending', async () => {
    const made = envelopeOf(
      await tool(
        'run_builder',
        {
          builder_id: 'manual_list_builder',
          form_data_json: JSON.stringify({ companies: Array.from({ length: 60 }, (_, i) => `Co ${i}`).join('\n') }),
          wait_seconds: 20,
        },
        { tasks: false },
      ),
    ).data;
    const column = envelopeOf(
      await tool(
        'create_column',
        {
          project_id: made.project_id,
          name: 'Slow',
          tool_id: 'slow_tool',
          config_json: JSON.stringify({ text: '{{Name}}', delay_ms: 400 }),
        },
        { tasks: false },
      ),
    ).data;
    const handle = await tool('run_pending_columns', { project_id: made.project_id, col_ids_json: JSON.stringify([column.col_id]) });
    expect(handle.resultType).toBe('task');
    expect(handle.statusMessage).toMatch(/^\d+ of 60 cells ended$/);
    await request('tasks/cancel', { taskId: handle.taskId }, { name: handle.taskId });
    expect((await request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId })).status).toBe('cancelled');
    // Nothing stays queued; the cells not started are pending again (a later run picks them up).
    const statuses = await until(async () => {
      const page = envelopeOf(
        await tool('get_project_rows', { project_id: made.project_id, page_size: 100, format: 'values' }, { tasks: false }),
      ).data;
      const all = (page.rows as { status?: Record<string, string> }[]).map((r) => r.status?.Slow ?? 'completed');
      return all.some((s) => s === 'queued' || s === 'running') ? undefined : all;
    }, 30_000);
    expect(statuses.filter((s) => s === 'pending').length).toBeGreaterThan(0);
  });

  test("another workspace's task id, or one never made, is not found", async () => {
    const handle = await tool('run_builder', { builder_id: 'manual_list_builder', form_data_json: '{"companies":"Mine"}' });
    const other = await t.newWorkspace();
    const theirs = request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId, key: other.key });
    await expect(theirs).rejects.toMatchObject({ code: -32602 });
    await expect(request('tasks/cancel', { taskId: handle.taskId }, { name: handle.taskId, key: other.key })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(request('tasks/get', { taskId: 'nope' }, { name: 'nope' })).rejects.toMatchObject({ code: -32602 });
    // A client that did not declare the extension has no task methods (-32021, a capability it lacks).
    await expect(request('tasks/get', { taskId: handle.taskId }, { name: handle.taskId, tasks: false })).rejects.toMatchObject({
      code: -32021,
    });
    // No task here ever waits for input.
    await expect(request('tasks/update', { taskId: handle.taskId, inputResponses: {} }, { name: handle.taskId })).rejects.toMatchObject({
      code: -32602,
    });
  });
});
