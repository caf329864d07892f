import { describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The plugin boundary (docs/architecture.md): a plugin imports the host only through
 * `workflow-service/plugin-sdk` (its tests also `workflow-service/plugin-testing`), npm packages,
 * its own folder and shared `_` folders under plugins/; the kernel never names a bundled plugin.
 */

const ROOT = resolve(import.meta.dir, '..');
const PLUGINS = join(ROOT, 'plugins');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|js|mjs|cjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Every module specifier a source imports or re-exports, statically or dynamically. */
function specifiers(source: string): string[] {
  const out: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\b(?:import|require)\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  for (const re of patterns) for (const m of source.matchAll(re)) out.push(m[1] as string);
  return out;
}

/**
 * What is wrong with one import of the plugin file `file`, or null. Relative imports may reach the
 * plugin's own folder and shared `_` folders under plugins/, nothing else; of the host, only the SDK.
 */
function importProblem(file: string, spec: string): string | null {
  if (spec === 'workflow-service/plugin-sdk') return null;
  if (spec === 'workflow-service/plugin-testing') return /\.test\.ts$/.test(file) ? null : 'plugin-testing is for tests only';
  if (spec.startsWith('workflow-service')) return 'imports the host other than through workflow-service/plugin-sdk';
  if (spec.startsWith('/') || spec.startsWith('file:')) return 'imports by absolute path';
  if (!spec.startsWith('.')) return null; // an npm package
  const target = relative(PLUGINS, resolve(dirname(file), spec));
  if (target.startsWith('..')) return `reaches ${relative(ROOT, resolve(dirname(file), spec))} outside plugins/`;
  const own = relative(PLUGINS, dirname(file)).split(sep).slice(0, 2).join(sep);
  const folders = target.split(sep).slice(0, -1);
  if (own.split(sep)[1]?.startsWith('_') || target.startsWith(own + sep) || folders.some((f) => f.startsWith('_'))) return null;
  return `reaches another plugin's folder (${target})`;
}

/** Ids and legacy ids of the bundled plugins, read from their definitions. */
async function bundledIds(): Promise<string[]> {
  const ids: string[] = [];
  for (const kind of ['builders', 'tools']) {
    for (const e of readdirSync(join(PLUGINS, kind), { withFileTypes: true })) {
      if (!e.isDirectory() || e.name.startsWith('_')) continue;
      const def = (await import(join(PLUGINS, kind, e.name, 'index.ts'))).default as { id: string; legacyIds: string[] };
      ids.push(def.id, ...def.legacyIds);
    }
  }
  return ids;
}

const transpiler = new Bun.Transpiler({ loader: 'ts' });

/** The bundled plugin ids a kernel source names in its code (comments and types left out). */
function namedIds(source: string, ids: string[]): string[] {
  const code = transpiler.transformSync(source);
  return ids.filter((id) => new RegExp(`\\b${id}\\b`).test(code));
}

describe('plugins reach the host only through the SDK', () => {
  test('no file under plugins/ imports core/, adapters/ or another plugin by path', async () => {
    const problems: string[] = [];
    for (const file of filesUnder(PLUGINS)) {
      const source = await Bun.file(file).text();
      for (const spec of specifiers(source)) {
        const problem = importProblem(file, spec);
        if (problem) problems.push(`${relative(ROOT, file)}: '${spec}' ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test('the check catches a plugin reaching into core/ or adapters/', () => {
    const file = join(PLUGINS, 'tools/example/index.ts');
    const source =
      "import { x } from '../../../core/errors.ts';\nexport { y } from '../../../adapters/queue/in-process.ts';\nconst z = await import('../other/index.ts');";
    expect(specifiers(source).map((s) => importProblem(file, s) !== null)).toEqual([true, true, true]);
    expect(importProblem(file, '../_web/fetch-page.ts')).toBeNull();
    expect(importProblem(file, '../../_providers/apollo/apollo-client.ts')).toBeNull();
    expect(importProblem(file, './extract.ts')).toBeNull();
    expect(importProblem(file, 'tldts')).toBeNull();
  });
});

describe('the kernel never names a bundled plugin', () => {
  test('no file under core/ or adapters/ names a bundled plugin id in its code', async () => {
    const ids = await bundledIds();
    expect(ids).toContain('csv_import_builder');
    const problems: string[] = [];
    // The API docs' example story names two real plugins so that "Try it out" works as shown; it is
    // documentation, read by nothing that runs, and every operation takes its ids from that one file.
    const docsOnly = new Set([join(ROOT, 'core/operations/examples.ts')]);
    for (const file of [...filesUnder(join(ROOT, 'core')), ...filesUnder(join(ROOT, 'adapters'))]) {
      if (docsOnly.has(file)) continue;
      const named = namedIds(await Bun.file(file).text(), ids);
      if (named.length) problems.push(`${relative(ROOT, file)} names ${named.join(', ')}`);
    }
    expect(problems).toEqual([]);
  });

  test('the check sees ids in code, not in comments', () => {
    expect(namedIds("// reads formula columns\nconst tool = 'formula';", ['formula'])).toEqual(['formula']);
    expect(namedIds('/** like formula does */ export const x = 1;', ['formula'])).toEqual([]);
  });
});
