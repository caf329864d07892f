import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startMcpTestService } from './mcp-support.ts';

/** The official MCP conformance suite (a dev dependency: nothing is downloaded at test time). */
const CONFORMANCE = resolve(import.meta.dir, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');
/** Its 0.2 line (published as alphas so far), which knows revision 2026-07-28 and the Tasks extension. */
const CONFORMANCE_NEXT = resolve(import.meta.dir, '../../node_modules/@modelcontextprotocol/conformance-next/dist/index.js');

/**
 * Server scenarios left out, one reason each. Most call the suite's own fixtures (its `test_*`
 * tools, `test://` resources, `test_*` prompts), which a real server does not have (docs/mcp.md).
 */
const EXCLUDED: Record<string, string> = {
  'completion-complete': 'completes the fixture prompt test_prompt_with_arguments',
  'tools-call-simple-text': 'calls the fixture tool test_simple_text',
  'tools-call-image': 'calls the fixture tool test_image_content',
  'tools-call-audio': 'calls the fixture tool test_audio_content',
  'tools-call-embedded-resource': 'calls the fixture tool test_embedded_resource',
  'tools-call-mixed-content': 'calls the fixture tool test_multiple_content_types',
  'tools-call-with-logging': 'calls the fixture tool test_tool_with_logging',
  'tools-call-error': 'calls the fixture tool test_error_handling',
  'tools-call-with-progress': 'calls the fixture tool test_tool_with_progress',
  'tools-call-sampling': 'calls the fixture tool test_sampling',
  'tools-call-elicitation': 'calls the fixture tool test_elicitation',
  'json-schema-2020-12': 'lists the fixture tool json_schema_2020_12_tool',
  'elicitation-sep1034-defaults': 'calls the fixture tool test_elicitation_sep1034_defaults',
  'elicitation-sep1330-enums': 'calls the fixture tool test_elicitation_sep1330_enums',
  'server-sse-polling': 'calls the fixture tool test_reconnection',
  'resources-read-text': 'reads the fixture resource test://static-text',
  'resources-read-binary': 'reads the fixture resource test://static-binary',
  'resources-templates-read': 'reads the fixture template test://template/{id}/data',
  'resources-subscribe': 'subscribes to the fixture resource test://watched-resource',
  'resources-unsubscribe': 'unsubscribes from the fixture resource test://watched-resource',
  'prompts-get-simple': 'gets the fixture prompt test_simple_prompt',
  'prompts-get-with-args': 'gets the fixture prompt test_prompt_with_arguments',
  'prompts-get-embedded-resource': 'gets the fixture prompt test_prompt_with_embedded_resource',
  'prompts-get-with-image': 'gets the fixture prompt test_prompt_with_image',
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** Runs the suite's server scenarios (every one, or as `args` choose) against `url`; the checks of each scenario, by name. */
async function runSuite(url: string, suite = CONFORMANCE, args = ['--suite', 'all']): Promise<Map<string, Check[]>> {
  const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  try {
    const proc = Bun.spawn([process.execPath, suite, 'server', '--url', url, ...args, '--output-dir', out], {
      stdout: 'pipe',
      stderr: 'pipe',
      // Loopback only, even where the environment names an HTTP proxy.
      env: { ...process.env, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
    });
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const results = new Map<string, Check[]>();
    // One folder per scenario: server-<scenario>-<timestamp>/checks.json.
    for (const dir of readdirSync(out)) {
      const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T.+$/.exec(dir)?.[1];
      if (scenario) results.set(scenario, JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')));
    }
    if (results.size === 0) throw new Error(`the conformance suite wrote no results:\n${stdout}\n${stderr}`);
    return results;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * The service behind a loopback reverse proxy that adds the workspace key: the suite cannot send
 * headers, as a gateway in front of the service would; the proxy is the public MCP URL
 * (MCP_RESOURCE_URL) and keeps the Host.
 */
async function serviceBehindProxy(): Promise<{ url: string; stop(): Promise<void> }> {
  let upstream = '';
  let key = '';
  const proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.set('service-api-key', key);
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
      return fetch(`${upstream}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: 'manual' });
    },
  });
  const url = `http://127.0.0.1:${proxy.port}/mcp/`;
  const t = await startMcpTestService('sqlite', { MCP_RESOURCE_URL: url });
  upstream = new URL(t.mcpUrl).origin;
  key = t.key;
  return {
    url,
    async stop() {
      await t.stop();
      proxy.stop(true);
    },
  };
}

describe('the official MCP conformance suite (server scenarios)', () => {
  let service: Awaited<ReturnType<typeof serviceBehindProxy>>;
  let results: Map<string, Check[]>;
  beforeAll(async () => {
    service = await serviceBehindProxy();
    results = await runSuite(service.url);
  }, 120_000);

  /** Whether a scenario may fail: it needs the suite's fixtures. */
  const excused = (scenario: string) => EXCLUDED[scenario] !== undefined;
  afterAll(() => service?.stop());

  test('every scenario that needs no fixture of the suite passes', () => {
    const failed: string[] = [];
    for (const [scenario, checks] of results) {
      if (excused(scenario)) continue;
      for (const c of checks) if (c.status === 'FAILURE') failed.push(`${scenario}: ${c.id}: ${c.errorMessage ?? ''}`);
    }
    expect(failed).toEqual([]);
  });

  test('the fixture scenarios reach methods that answer: never "Method not found"', () => {
    const unanswered: string[] = [];
    for (const [scenario, checks] of results) {
      // Subscriptions are not offered (capability resources.subscribe absent): a stateless server
      // has no session to send resources/updated to, so "Method not found" is the right answer.
      if (scenario === 'resources-subscribe' || scenario === 'resources-unsubscribe') continue;
      for (const c of checks) if (/method not found|-32601/i.test(c.errorMessage ?? '')) unanswered.push(`${scenario}: ${c.errorMessage}`);
    }
    expect(unanswered).toEqual([]);
    for (const s of ['completion-complete', 'resources-read-text', 'resources-templates-read', 'prompts-get-simple'])
      expect(results.has(s)).toBe(true);
  });

  test('the DNS-rebinding scenario ran and passed both of its checks', () => {
    const checks = results.get('dns-rebinding-protection') ?? [];
    expect(checks.map((c) => [c.id, c.status])).toEqual([
      ['localhost-host-rebinding-rejected', 'SUCCESS'],
      ['localhost-host-valid-accepted', 'SUCCESS'],
    ]);
  });

  test('the scenarios required are all there (none was renamed away)', () => {
    const required = [...results.keys()].filter((s) => !excused(s));
    for (const s of [
      'server-initialize',
      'ping',
      'tools-list',
      'logging-set-level',
      'resources-list',
      'prompts-list',
      'server-sse-multiple-streams',
      'dns-rebinding-protection',
    ])
      expect(required).toContain(s);
  });
});

/**
 * A check of the 0.2 suite that cannot pass here because it needs the suite's own fixtures: its
 * `test_*`, `greet`, `slow_compute`… tools, `test://` resources and prompts (a real server has its
 * own), or tools with `x-mcp-header` annotations or that ask for input (MRTR) — ours have none.
 */
const NEEDS_FIXTURE =
  /^Not testable|Unknown tool "|Unknown prompt "test_|not found\. Available tools|test:\/\/|fixture|x-mcp-header|failing_job|InputRequiredResult/i;

describe('the official MCP conformance suite 0.2, revision 2026-07-28 and the Tasks extension', () => {
  let service: Awaited<ReturnType<typeof serviceBehindProxy>>;
  let results: Map<string, Check[]>;
  beforeAll(async () => {
    service = await serviceBehindProxy();
    // Exactly what the revision requires, then the Tasks extension's negotiation.
    results = await runSuite(service.url, CONFORMANCE_NEXT, ['--requirements', '2026-07-28']);
    for (const [k, v] of await runSuite(service.url, CONFORMANCE_NEXT, ['--scenario', 'tasks-capability-negotiation'])) results.set(k, v);
  }, 240_000);
  afterAll(() => service?.stop());

  test('every check that needs no fixture of the suite passes', () => {
    const failed: string[] = [];
    for (const [scenario, checks] of results)
      for (const c of checks)
        if (c.status === 'FAILURE' && !NEEDS_FIXTURE.test(c.errorMessage ?? '')) failed.push(`${scenario}: ${c.id}: ${c.errorMessage}`);
    expect(failed).toEqual([]);
  });

  test('the modern scenarios ran and passed: stateless requests, caching, headers, resource not found, tasks advertised', () => {
    const passed = (scenario: string) => (results.get(scenario) ?? []).filter((c) => c.status === 'SUCCESS').map((c) => c.id);
    expect(passed('caching').length).toBeGreaterThan(3);
    expect(passed('http-header-validation').length).toBeGreaterThan(5);
    expect(passed('sep-2164-resource-not-found').length).toBeGreaterThan(0);
    expect(passed('server-stateless').length).toBeGreaterThan(10);
    expect(passed('tasks-capability-negotiation')).toContain('tasks-extension-advertised');
  });
});
