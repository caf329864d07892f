import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadPlugins } from '../../app/load-plugins.ts';
import { startTestService, type TestService, waitForBuilder } from '../support/test-service.ts';
import { addColumn, runColumns, SERVICE_START_MS } from './enrich-helpers.ts';

const REPO = resolve(import.meta.dir, '../..');

/** Runs `bun run plugin:new …` (the package.json script) and answers its exit code and output. */
async function pluginNew(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(['bun', 'run', 'plugin:new', ...args], { cwd: REPO, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

describe('bun run plugin:new', () => {
  let dir: string;
  let t: TestService | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wfs-plugins-'));
    for (const [kind, id] of [
      ['tool', 'shout'],
      ['builder', 'name_list'],
    ] as const) {
      const r = await pluginNew(kind, id, '--dir', dir);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))).files).toEqual([
        join(dir, `${kind}s`, id, 'index.ts'),
        join(dir, `${kind}s`, id, `${id}.test.ts`),
      ]);
    }
  }, SERVICE_START_MS);
  afterAll(async () => {
    await t?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('scaffolds index.ts and a test for each kind, and the scaffolded tests pass', async () => {
    for (const f of [
      'tools/shout/index.ts',
      'tools/shout/shout.test.ts',
      'builders/name_list/index.ts',
      'builders/name_list/name_list.test.ts',
    ]) {
      expect(existsSync(join(dir, f))).toBe(true);
    }
    // Run from the plugins folder, as its author would (no repo preload, no repo bunfig).
    const proc = Bun.spawn(['bun', 'test'], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, tail: `${out}${err}`.trim().split('\n').slice(-6).join('\n') }).toMatchObject({
      code: 0,
      tail: expect.stringMatching(/4 pass\s+0 fail/),
    });
  }, 30_000);

  test('the scaffolded plugins load through PLUGINS_DIR and work in the service', async () => {
    const registry = await loadPlugins(dir);
    expect(registry.tool('shout')?.id).toBe('shout');
    expect(registry.builder('name_list')?.id).toBe('name_list');
    t = await startTestService('sqlite', { PLUGINS_DIR: dir });
    expect((await t.api('GET', '/tools')).body.map((x: any) => x.tool_id)).toContain('shout');
    const p = await t.api('POST', '/projects', { body: { builder_id: 'name_list', form_data: { names: 'Acme\nGlobex' } } });
    expect(p.status).toBe(201);
    await waitForBuilder(t, p.body.project_id);
    const col = await addColumn(t, p.body.project_id, 'Loud', 'shout', { text: '{{Name}}' });
    const rows = await runColumns(t, p.body.project_id, [col]);
    expect(rows.map((r) => r.company.Loud.value)).toEqual(['ACME', 'GLOBEX']);
  });

  test('refuses a bad kind, a bad id and an existing plugin', async () => {
    for (const args of [
      ['widget', 'x_y'],
      ['tool', 'Bad-Id'],
      ['tool', 'shout'],
    ]) {
      const r = await pluginNew(...(args as string[]), '--dir', dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('plugin:new:');
    }
  });
});
