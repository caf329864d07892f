import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { DIALECTS } from '../support/databases.ts';
import { type McpTestService, startMcpTestService } from './mcp-support.ts';

/**
 * Waiting instead of polling (docs/mcp.md): wait_seconds on run_builder and run_pending_columns,
 * wait_for_project on work already started, with notifications/progress streamed to the SDK
 * client's `onprogress` while the call waits — on both databases (MariaDB: results come from the
 * workers through Redis).
 */

const SLOW_PLUGINS = resolve(import.meta.dir, '../fixtures/plugins');

describe.each(DIALECTS)('MCP waiting on %s', (dialect) => {
  let t: McpTestService;
  let client: Client;

  beforeAll(async () => {
    t = await startMcpTestService(dialect, { PLUGINS_DIR: SLOW_PLUGINS });
    client = await t.client();
  });
  afterAll(() => t.stop());

  /** A tool call with a progress token: its envelope and every progress notification it received. */
  async function callWithProgress(name: string, args: Record<string, unknown>) {
    const seen: Progress[] = [];
    const result = (await client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p),
      timeout: 60_000,
    })) as { structuredContent?: any };
    return { envelope: result.structuredContent, seen };
  }

  test('run_builder with wait_seconds answers once the run ended, with rows-created progress meanwhile', async () => {
    const { envelope, seen } = await callWithProgress('run_builder', {
      builder_id: 'slow_builder',
      form_data_json: JSON.stringify({ pages: 6, delay_ms: 150, cursor: false }),
      wait_seconds: 30,
    });
    expect(envelope.ok).toBe(true);
    expect(envelope.data.project_id).toBeString();
    expect(envelope.wait).toMatchObject({ ended: true, builder: { status: 'completed' }, cells_working: 0 });
    expect(seen.length).toBeGreaterThan(1);
    // Progress only grows, toward the run's target.
    for (let i = 1; i < seen.length; i++) expect((seen[i] as Progress).progress).toBeGreaterThan((seen[i - 1] as Progress).progress);
    expect(seen.at(-1)).toMatchObject({ progress: 60, total: 60 });
    expect(seen.some((p) => /rows created/.test(p.message ?? ''))).toBe(true);
    const project = (await client.callTool({ name: 'get_project', arguments: { project_id: envelope.data.project_id } })) as any;
    expect(project.structuredContent.data.row_count).toBe(60);
  });

  test('run_pending_columns with wait_seconds waits for the cells, telling cells ended', async () => {
    const made = (await client.callTool({
      name: 'run_builder',
      arguments: { builder_id: 'slow_builder', form_data_json: JSON.stringify({ pages: 3, delay_ms: 0, cursor: false }), wait_seconds: 20 },
    })) as any;
    const projectId = made.structuredContent.data.project_id;
    const column = (await client.callTool({
      name: 'create_column',
      arguments: {
        project_id: projectId,
        name: 'Upper',
        tool_id: 'slow_tool',
        config_json: JSON.stringify({ text: '{{Name}}', delay_ms: 200 }),
      },
    })) as any;
    expect(column.structuredContent.ok).toBe(true);
    const { envelope, seen } = await callWithProgress('run_pending_columns', { project_id: projectId, wait_seconds: 30 });
    expect(envelope.data.queued).toBe(30);
    expect(envelope.wait).toMatchObject({ ended: true, cells_working: 0 });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)).toMatchObject({ progress: 30, total: 30 });
    const rows = (await client.callTool({ name: 'get_project_rows', arguments: { project_id: projectId, page_size: 100 } })) as any;
    expect(rows.structuredContent.data.rows.every((r: any) => r.company.Upper.status === 'completed')).toBe(true);
  });

  test('wait_for_project waits on work already started, and says when the time ran out first', async () => {
    const made = (await client.callTool({
      name: 'run_builder',
      arguments: { builder_id: 'slow_builder', form_data_json: JSON.stringify({ pages: 20, delay_ms: 250, cursor: false }) },
    })) as any;
    const projectId = made.structuredContent.data.project_id;
    // It answers while the builder (5 s of pages) still runs: the wait ended on its own time.
    const short = (await client.callTool({ name: 'wait_for_project', arguments: { project_id: projectId, wait_seconds: 1 } })) as any;
    expect(short.structuredContent.data).toMatchObject({ ended: false, builder: { status: expect.stringMatching(/queued|running/) } });
    const { envelope } = await callWithProgress('wait_for_project', { project_id: projectId, wait_seconds: 30 });
    expect(envelope.data).toMatchObject({ ended: true, builder: { status: 'completed' } });
    // REST has the same operation: GET /projects/{id}/wait.
    const rest = await t.api('GET', `/projects/${projectId}/wait?wait_seconds=0`);
    expect(rest.status).toBe(200);
    expect(rest.body.ended).toBe(true);
  });

  test('bad waits are refused at once with a clear error', async () => {
    for (const wait_seconds of [-1, 51, 2.5, '10']) {
      const r = (await client.callTool({
        name: 'run_builder',
        arguments: { builder_id: 'slow_builder', form_data_json: JSON.stringify({ pages: 1, delay_ms: 0, cursor: false }), wait_seconds },
      })) as any;
      expect(r.structuredContent).toMatchObject({ ok: false, code: 'validation_error' });
      expect(r.structuredContent.detail.message).toContain('wait_seconds');
    }
    const other = (await client.callTool({
      name: 'wait_for_project',
      arguments: { project_id: 'no-such-project', wait_seconds: 5 },
    })) as any;
    expect(other.structuredContent).toMatchObject({ ok: false, code: 'not_found' });
    const tooLong = (await client.callTool({ name: 'wait_for_project', arguments: { project_id: 'x', wait_seconds: 500 } })) as any;
    expect(tooLong.structuredContent.ok).toBe(false);
  });
});
