/**
 * `bun run plugin:new <builder|tool> <id> [--dir <plugins root>]` — scaffolds a working plugin and
 * its passing test: <root>/<kind>s/<id>/index.ts and <root>/<kind>s/<id>/<id>.test.ts. The root is
 * the repo's plugins/ by default; --dir points at a PLUGINS_DIR-style folder elsewhere (it holds
 * builders/ and tools/). Prints JSON naming the files. See docs/plugins.md for the contract.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const REPO = resolve(import.meta.dir, '..');
const SLUG = /^[a-z][a-z0-9_]{1,63}$/;

function fail(message: string): never {
  console.error(`plugin:new: ${message}`);
  console.error('usage: bun run plugin:new <builder|tool> <id> [--dir <plugins root>]');
  process.exit(2);
}

/** An import specifier from `fromDir` to a file of this repo ("../../../core/…"). */
function importPath(fromDir: string, repoFile: string): string {
  const rel = relative(fromDir, join(REPO, repoFile)).split('\\').join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

const title = (id: string) => id.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());

function toolSource(id: string, types: string): string {
  return `import { Type } from '@sinclair/typebox';
import { defineTool } from '${types}';

/**
 * ${title(id)}: replace this with what the tool does. The host renders {{Column}} templates in the
 * config for each row, skips rows where a \`requires\` field is empty, and calls \`enrich\` with up to
 * \`batchSize\` rows; answer one result per row, in order.
 */
export default defineTool({
  kind: 'tool',
  id: '${id}',
  version: '0.1.0',
  name: '${title(id)}',
  description: 'Say for agents what it does, what it needs and what it costs. Config: {"text": "{{Name}}"}. Free.',
  category: 'transform',
  tags: ['${id}'],
  legacyIds: [],
  input: Type.Object({ text: Type.String({ description: 'Usually a {{Column}} template.' }) }, { additionalProperties: false }),
  requires: ['text'],
  produces: [{ field: 'value', description: 'The text in upper case.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 100,
  async enrich(items, ctx) {
    // A tool that calls a provider answers deterministic fake data (example.com) when
    // ctx.providerMode === 'sandbox', reads its key with requireEnv(ctx, 'X_API_KEY') and fetches
    // through providerJson (core/plugins/provider-http.ts), which enforces the network policy.
    void ctx;
    return items.map((item) => {
      const text = String(item.config.text).trim();
      return text ? { status: 'ok' as const, value: text.toUpperCase() } : { status: 'no_result' as const, reason: 'empty text' };
    });
  },
});
`;
}

function toolTest(id: string, registry: string): string {
  return `import { expect, test } from 'bun:test';
import { assertTool } from '${registry}';
import plugin from './index.ts';

const ctx = { providerMode: 'sandbox' as const, env: () => undefined, signal: new AbortController().signal, log: () => {} };

test('${id} is a valid tool definition', () => {
  expect(() => assertTool(plugin, '${id}')).not.toThrow();
});

test('${id} answers one result per row, in order', async () => {
  const items = ['acme', ' '].map((text, i) => ({ rowId: String(i), config: { text }, row: {} }));
  expect(await plugin.enrich(items, ctx)).toEqual([
    { status: 'ok', value: 'ACME' },
    { status: 'no_result', reason: 'empty text' },
  ]);
});
`;
}

function builderSource(id: string, types: string): string {
  return `import { Type } from '@sinclair/typebox';
import { defineBuilder } from '${types}';

/**
 * ${title(id)}: replace this with how the builder finds rows. The host validates the form against
 * \`input\`, reserves credits for \`target(form)\` rows, then writes each page \`run\` yields.
 */
export default defineBuilder({
  kind: 'builder',
  id: '${id}',
  version: '0.1.0',
  name: '${title(id)}',
  description: 'Say for agents what it finds, from what form, and what it costs. Form: {"names": "Acme\\\\nGlobex"}. Free.',
  category: 'companies',
  tags: ['${id}'],
  legacyIds: [],
  input: Type.Object({ names: Type.String({ minLength: 1, description: 'One company name per line.' }) }, { additionalProperties: false }),
  cost: { credits: 0, per: 'row' },
  maxRows: 1000,
  columns: () => ['Name'],
  projectName: (form) => \`${title(id)}: \${form.names.split('\\n')[0]}\`.slice(0, 200),
  target: (form) => Math.min(1000, form.names.split('\\n').filter((l) => l.trim()).length),
  async *run(form, ctx) {
    // A builder that calls a provider yields fake rows (example.com) when ctx.providerMode === 'sandbox'.
    void ctx;
    const names = form.names.split('\\n').map((l) => l.trim()).filter(Boolean).slice(0, 1000);
    for (let i = 0; i < names.length; i += 100) yield names.slice(i, i + 100).map((Name) => ({ Name }));
  },
});
`;
}

function builderTest(id: string, registry: string): string {
  return `import { expect, test } from 'bun:test';
import { assertBuilder } from '${registry}';
import plugin from './index.ts';

const ctx = { providerMode: 'sandbox' as const, env: () => undefined, signal: new AbortController().signal, log: () => {} };

test('${id} is a valid builder definition', () => {
  expect(() => assertBuilder(plugin, '${id}')).not.toThrow();
});

test('${id} yields one row per name', async () => {
  const form = { names: 'Acme\\n\\nGlobex' };
  const rows = [];
  for await (const page of plugin.run(form, ctx)) rows.push(...(Array.isArray(page) ? page : page.rows));
  expect(rows).toEqual([{ Name: 'Acme' }, { Name: 'Globex' }]);
  expect(plugin.target(form)).toBe(2);
});
`;
}

/** Whether `@sinclair/typebox` resolves from `dir` (looked up by hand: resolving could trigger Bun's auto-install). */
function typeboxReachable(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules', '@sinclair', 'typebox'))) return true;
    if (dirname(d) === d) return false;
  }
}

function main(argv: string[]): void {
  const args = [...argv];
  let root = join(REPO, 'plugins');
  const at = args.indexOf('--dir');
  if (at >= 0) {
    const dir = args[at + 1];
    if (!dir) fail('--dir needs a folder');
    root = resolve(dir);
    args.splice(at, 2);
  }
  const [kind, id, ...rest] = args;
  if (rest.length) fail(`unexpected arguments: ${rest.join(' ')}`);
  if (kind !== 'builder' && kind !== 'tool') fail(`kind must be "builder" or "tool", got "${kind ?? ''}"`);
  if (!id || !SLUG.test(id)) fail(`id must match ${SLUG} (lower case, digits, _), got "${id ?? ''}"`);
  const folder = join(root, `${kind}s`, id);
  if (existsSync(folder)) fail(`${folder} already exists`);
  mkdirSync(folder, { recursive: true });
  const types = importPath(folder, 'core/plugins/plugin-types.ts');
  const registry = importPath(folder, 'core/plugins/registry.ts');
  const files = [join(folder, 'index.ts'), join(folder, `${id}.test.ts`)];
  writeFileSync(files[0] as string, kind === 'tool' ? toolSource(id, types) : builderSource(id, types));
  writeFileSync(files[1] as string, kind === 'tool' ? toolTest(id, registry) : builderTest(id, registry));
  // A plugins folder outside the repo must still import the host's @sinclair/typebox.
  let linked: string | null = null;
  if (!typeboxReachable(folder)) {
    linked = join(root, 'node_modules');
    symlinkSync(join(REPO, 'node_modules'), linked, 'dir');
  }
  console.log(JSON.stringify({ kind, id, files, linked_node_modules: linked, next: `bun test ${files[1]}` }, null, 2));
}

main(process.argv.slice(2));
