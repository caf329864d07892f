import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { type McpTestService, startMcpTestService } from './mcp-support.ts';

/** The MCP Inspector's CLI, installed as a devDependency so nothing is downloaded at test time. */
const INSPECTOR = resolve(import.meta.dir, '../../node_modules/.bin/mcp-inspector');

async function inspector(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([INSPECTOR, '--cli', ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, MCP_CATALOG_PATH: '/dev/null' },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

describe('the MCP Inspector CLI drives the server', () => {
  let t: McpTestService;
  beforeAll(async () => {
    t = await startMcpTestService('sqlite');
  });
  afterAll(() => t.stop());

  test('tools/list over streamable HTTP with the service-api-key header; schemas pass its strict portability check', async () => {
    const r = await inspector(
      t.mcpUrl,
      '--transport',
      'http',
      '--method',
      'tools/list',
      '--header',
      `service-api-key: ${t.key}`,
      '--strict',
    );
    expect(r.err).not.toContain('Error:');
    expect(r.code).toBe(0);
    const names = JSON.parse(r.out).tools.map((tool: { name: string }) => tool.name);
    expect(names).toContain('run_builder');
    expect(names).toContain('get_credits');
  });

  test('tools/call answers the envelope as text and structuredContent', async () => {
    const r = await inspector(
      t.mcpUrl,
      '--transport',
      'http',
      '--method',
      'tools/call',
      '--tool-name',
      'search_tools',
      '--tool-arg',
      'q=phone',
      '--header',
      `service-api-key: ${t.key}`,
    );
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out);
    expect(result.structuredContent.ok).toBe(true);
    expect(result.structuredContent.data[0].tool_id).toBe('phone_normalizer');
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  });

  test('without the header the Inspector is refused', async () => {
    const r = await inspector(t.mcpUrl, '--transport', 'http', '--method', 'tools/list');
    expect(r.code).not.toBe(0);
  });
});
