import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The layers of the house (docs/architecture.md), read from the code's own imports: who may import
 * whom, and how long a file may grow. Functions are held to 80 lines by Biome
 * (complexity/noExcessiveLinesPerFunction) and import cycles by Biome (suspicious/noImportCycles).
 */

const ROOT = resolve(import.meta.dir, '..');
const SOURCE_FOLDERS = ['app', 'doors', 'core', 'sdk', 'adapters', 'plugins', 'console', 'mcp-app', 'scripts'];

function sourceFiles(): string[] {
  return SOURCE_FOLDERS.flatMap((folder) =>
    [...new Bun.Glob('**/*.{ts,tsx}').scanSync({ cwd: join(ROOT, folder) })]
      .filter((f) => !f.includes('node_modules'))
      .map((f) => `${folder}/${f}`),
  ).sort();
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Each file's imports of this repository's files, as repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? '';
    if (spec.startsWith('.')) out.push(relative(ROOT, resolve(ROOT, dirname(file), spec)));
  }
  return out;
}

/** A layer may not import these: [importer prefix, imported prefix, why]. */
const FORBIDDEN: [string, string, string][] = [
  ['core/', 'doors/', 'the kernel serves every door; a door calls the kernel, never the reverse'],
  ['core/', 'app/', 'the composition root builds the kernel; the kernel does not know how it is assembled'],
  ['core/', 'console/', 'the console is a client of the API'],
  ['core/', 'sdk/', 'the plugin SDK sits on the kernel; the kernel checks plugins without it'],
  ['core/', 'adapters/', 'the kernel sees only its ports (core/ports/); adapters are chosen by app/'],
  ['doors/', 'adapters/', 'a door reaches storage and queues through the kernel'],
  ['doors/', 'app/', 'the composition root starts the doors, not the reverse'],
  ['adapters/', 'doors/', 'an adapter implements a port; it does not serve requests'],
  ['adapters/', 'app/', 'an adapter is handed what it needs by the composition root'],
  ['sdk/', 'doors/', 'plugins never see a door'],
  ['sdk/', 'adapters/', 'plugins never see storage or queues'],
  ['core/services/', 'core/operations/', 'operations are built on services: a service knows no operation'],
  ['core/services/', 'core/handlers/', 'job handlers sit above the services they use'],
  ['core/identity/', 'core/operations/', 'identity is below the operations that check it'],
  ['core/ports/', 'core/services/', 'a port names what the kernel needs, not how it uses it'],
  ['core/ports/', 'core/handlers/', 'a port names what the kernel needs, not how it uses it'],
  ['console/', 'core/', 'the console speaks HTTP to the API'],
  ['console/', 'adapters/', 'the console speaks HTTP to the API'],
  ['mcp-app/', 'core/', 'the MCP App reaches the server only through the host'],
  ['mcp-app/', 'adapters/', 'the MCP App reaches the server only through the host'],
  ['mcp-app/', 'doors/', 'the MCP App reaches the server only through the host'],
];

/** Files allowed past 400 lines, each with why. Keep it short. */
const LONG_FILES: Record<string, string> = {
  'adapters/storage/tables.ts': 'the whole schema, one table after another: split, it would be read in pieces',
  'console/src/api-types.d.ts': 'generated from the OpenAPI document by bun run console:types, never edited by hand',
};

describe('layers', () => {
  const files = sourceFiles();

  test('every source folder holds files', () => {
    for (const folder of SOURCE_FOLDERS) expect(files.some((f) => f.startsWith(`${folder}/`))).toBe(true);
  });

  test('no layer imports one it must not', () => {
    const found: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        for (const [from, to, why] of FORBIDDEN) {
          if (file.startsWith(from) && target.startsWith(to)) found.push(`${file} imports ${target}: ${why}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  test('plugins import only the SDK and files of their own folder tree', () => {
    const found = files
      .filter((f) => f.startsWith('plugins/'))
      .flatMap((f) =>
        importsOf(f)
          .filter((t) => !t.startsWith('plugins/'))
          .map((t) => `${f} imports ${t}`),
      );
    expect(found).toEqual([]);
  });

  test(`no source file over 400 lines (except ${Object.keys(LONG_FILES).length}, each with its reason)`, () => {
    const long = files.filter((f) => readFileSync(join(ROOT, f), 'utf8').split('\n').length > 400 && !(f in LONG_FILES));
    expect(long).toEqual([]);
    for (const f of Object.keys(LONG_FILES)) expect(files).toContain(f);
  });

  test('the rules see real imports: a known import of each kind is found', () => {
    expect(importsOf('app/service.ts')).toContain('doors/http/rest-app.ts');
    expect(importsOf('doors/http/rest-app.ts').some((t) => t.startsWith('core/'))).toBe(true);
  });
});
