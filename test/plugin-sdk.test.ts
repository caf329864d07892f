import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as hostSdk from '../core/plugin-sdk/index.ts';
import { addColumn, cellOf, csvProject, runColumns, SERVICE_START_MS } from './plugins/enrich-helpers.ts';
import { startTestService, type TestService, waitForBuilder } from './support/test-service.ts';

const FIXTURES = resolve(import.meta.dir, 'fixtures/plugins');

/** Whether a node_modules folder sits in `dir` or above it (then the SDK could resolve without the host's help). */
function nodeModulesAbove(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return true;
    if (dirname(d) === d) return false;
  }
}

describe('a PLUGINS_DIR outside the repo, importing workflow-service/plugin-sdk', () => {
  let dir: string;
  let t: TestService;
  beforeAll(async () => {
    // Two plugins copied as a user would, into a folder with no node_modules anywhere above it.
    dir = mkdtempSync(join(tmpdir(), 'wfs-sdk-plugins-'));
    cpSync(join(FIXTURES, 'tools/paid_lookup'), join(dir, 'tools/paid_lookup'), { recursive: true });
    cpSync(join(FIXTURES, 'builders/slow_builder'), join(dir, 'builders/slow_builder'), { recursive: true });
    writeFileSync(join(dir, 'tools/paid_lookup/sdk-ref.ts'), "export { ProviderError, version } from 'workflow-service/plugin-sdk';\n");
    t = await startTestService('sqlite', { PLUGINS_DIR: dir });
  }, SERVICE_START_MS);
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('its plugins load, are listed in GET /tools and GET /project-builders, and run', async () => {
    expect(nodeModulesAbove(dir)).toBe(false);
    expect((await t.api('GET', '/tools')).body.map((x: any) => x.tool_id)).toContain('paid_lookup');
    expect((await t.api('GET', '/project-builders')).body.map((x: any) => x.builder_id)).toContain('slow_builder');

    const built = await t.api('POST', '/projects', { body: { builder_id: 'slow_builder', form_data: { pages: 1, delay_ms: 0, cursor: false } } });
    expect(built.status).toBe(201);
    expect((await waitForBuilder(t, built.body.project_id)).builder_status.type).toBe('completed');

    const pid = await csvProject(t, 'Name\nAcme');
    const col = await addColumn(t, pid, 'Answer', 'paid_lookup', { key: '{{Name}}', answer: 'found {{Name}}' });
    expect(cellOf(await runColumns(t, pid, [col]), 'Name', 'Acme', 'Answer')).toMatchObject({ status: 'completed', value: 'found Acme' });
  });

  test('the plugin gets the host’s own SDK module, so the host recognises its ProviderError', async () => {
    const ref = await import(join(dir, 'tools/paid_lookup/sdk-ref.ts'));
    expect(ref.ProviderError).toBe(hostSdk.ProviderError);
    expect(ref.version).toBe(hostSdk.version);
  });
});
