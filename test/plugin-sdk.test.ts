import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import * as hostSdk from '../sdk/plugin-sdk/index.ts';
import { loadPlugins } from '../app/load-plugins.ts';
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

    const built = await t.api('POST', '/projects', {
      body: { builder_id: 'slow_builder', form_data: { pages: 1, delay_ms: 0, cursor: false } },
    });
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

/** A package folder as its author would publish it: package.json and an index.ts importing the SDK. */
function writePackage(dir: string, name: string, index: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', exports: './index.ts' }));
  writeFileSync(join(dir, 'index.ts'), index);
  return dir;
}

const TOOL = `defineTool({
  kind: 'tool', id: 'pkg_shout', version: '1.0.0', name: 'Shout (package)', description: 'Upper-cases a text. Free.',
  category: 'transform', tags: [], legacyIds: [],
  input: Type.Object({ text: Type.String() }, { additionalProperties: false }),
  requires: ['text'], produces: [{ field: 'text', description: 'Upper case.' }], cost: { credits: 0, per: 'result' }, batchSize: 10,
  async enrich(items) { return items.map((i) => ({ status: 'ok' as const, value: i.config.text.toUpperCase() })); },
})`;

const BUILDER = `defineBuilder({
  kind: 'builder', id: 'pkg_names', version: '1.0.0', name: 'Names (package)', description: 'One row per name. Free.',
  category: 'companies', tags: [], legacyIds: [],
  input: Type.Object({ names: Type.Array(Type.String()) }, { additionalProperties: false }),
  cost: { credits: 0, per: 'row' }, maxRows: 100, columns: () => ['Name'], projectName: () => 'Names', target: (f) => f.names.length,
  async *run(form) { yield form.names.map((Name) => ({ Name })); },
})`;

describe('plugins as npm packages named in PLUGINS', () => {
  // Installed as \`bun add\` or \`bun link\` would: node_modules/<name> of the service's folder, linked to the package.
  const name = `wfs-test-plugins-${process.pid}`;
  const link = resolve(import.meta.dir, '../node_modules', name);
  let dir: string;
  let t: TestService | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wfs-plugin-package-'));
    const source = `import { Type, defineBuilder, defineTool } from 'workflow-service/plugin-sdk';\nexport const shout = ${TOOL};\nexport default [${BUILDER}];\nexport const notAPlugin = 42;\n`;
    writePackage(join(dir, 'acme'), name, source);
    rmSync(link, { force: true });
    symlinkSync(join(dir, 'acme'), link, 'dir');
  });
  afterAll(async () => {
    await t?.stop();
    rmSync(link, { force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'an installed package’s definitions (default export array and named exports) are in the catalogs and run',
    async () => {
      t = await startTestService('sqlite', { PLUGINS: ` ${name} ` });
      expect((await t.api('GET', '/tools')).body.map((x: any) => x.tool_id)).toContain('pkg_shout');
      expect((await t.api('GET', '/project-builders')).body.map((x: any) => x.builder_id)).toContain('pkg_names');
      const p = await t.api('POST', '/projects', { body: { builder_id: 'pkg_names', form_data: { names: ['Acme', 'Globex'] } } });
      expect(p.status).toBe(201);
      await waitForBuilder(t, p.body.project_id);
      const col = await addColumn(t, p.body.project_id, 'Loud', 'pkg_shout', { text: '{{Name}}' });
      const rows = await runColumns(t, p.body.project_id, [col]);
      expect(rows.map((r) => r.company.Loud.value).sort()).toEqual(['ACME', 'GLOBEX']);
    },
    SERVICE_START_MS,
  );

  test('a package may also be named by its folder’s path', async () => {
    const registry = await loadPlugins(undefined, [join(dir, 'acme')]);
    expect([registry.tool('pkg_shout')?.id, registry.builder('pkg_names')?.id]).toEqual(['pkg_shout', 'pkg_names']);
  });

  test('a package that is not installed stops start-up, naming it and how to install it', async () => {
    await expect(loadPlugins(undefined, ['wfs-no-such-plugin-package'])).rejects.toThrow(
      'PLUGINS: package "wfs-no-such-plugin-package" is not installed in',
    );
  });

  test('a bad definition in a package stops start-up, naming the package, the export and the field', async () => {
    const bad = writePackage(
      join(dir, 'bad'),
      'bad',
      `import { Type, defineTool } from 'workflow-service/plugin-sdk';\nexport const shout = { ...${TOOL}, id: 'pkg_bad', batchSize: 0 };\n`,
    );
    await expect(loadPlugins(undefined, [bad])).rejects.toThrow(
      `plugin package ${bad} (export shout): field "batchSize" must be an integer >= 1`,
    );
  });

  test('a plugin written for another SDK is refused at start by name, saying what to do; a range it fits loads', async () => {
    const later = writePackage(
      join(dir, 'later'),
      'later',
      `import { Type, defineTool } from 'workflow-service/plugin-sdk';\nexport default { ...${TOOL}, id: 'pkg_later', sdk: '^2.0' };\n`,
    );
    await expect(loadPlugins(undefined, [later])).rejects.toThrow(
      `plugin package ${later} (default export): field "sdk" needs plugin SDK ^2.0; this service has ${hostSdk.version}: upgrade the service`,
    );
    const garbled = writePackage(
      join(dir, 'garbled'),
      'garbled',
      `import { Type, defineTool } from 'workflow-service/plugin-sdk';\nexport default { ...${TOOL}, id: 'pkg_garbled', sdk: 'latest' };\n`,
    );
    await expect(loadPlugins(undefined, [garbled])).rejects.toThrow('field "sdk" "latest" is not a semver range');
    const fits = writePackage(
      join(dir, 'fits'),
      'fits',
      `import { Type, defineTool } from 'workflow-service/plugin-sdk';\nexport default { ...${TOOL}, id: 'pkg_fits', sdk: '^1.1' };\n`,
    );
    expect((await loadPlugins(undefined, [fits])).tool('pkg_fits')?.id).toBe('pkg_fits');
  });

  test('a package with no definition, or a default export that is not one, is refused', async () => {
    const none = writePackage(join(dir, 'none'), 'none', 'export const answer = 42;\n');
    await expect(loadPlugins(undefined, [none])).rejects.toThrow(`PLUGINS: package "${none}" exports no plugin definition`);
    const other = writePackage(join(dir, 'other'), 'other', 'export default { hello: 1 };\n');
    await expect(loadPlugins(undefined, [other])).rejects.toThrow(`PLUGINS: package "${other}" default export is not a plugin definition`);
  });

  test('a package cannot take an id already registered', async () => {
    const dup = writePackage(
      join(dir, 'dup'),
      'dup',
      `import { Type, defineTool } from 'workflow-service/plugin-sdk';\nexport default { ...${TOOL}, id: 'formula' };\n`,
    );
    await expect(loadPlugins(undefined, [dup])).rejects.toThrow(
      `plugin package ${dup} (default export): field "id" "formula" is already registered`,
    );
  });
});
