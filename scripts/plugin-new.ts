/**
 * `bun run plugin:new <builder|tool> <id> [--dir <plugins root>]` — scaffolds a working plugin and
 * its passing test: <root>/<kind>s/<id>/index.ts and <root>/<kind>s/<id>/<id>.test.ts, importing
 * only `workflow-service/plugin-sdk` and `workflow-service/plugin-testing`. The root is the repo's
 * plugins/ by default; --dir points at a PLUGINS_DIR-style folder elsewhere (it holds builders/
 * and tools/). Prints JSON naming the files. See docs/plugins.md for the contract.
 */
import { existsSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const REPO = resolve(import.meta.dir, '..');
const SLUG = /^[a-z][a-z0-9_]{1,63}$/;

function fail(message: string): never {
  console.error(`plugin:new: ${message}`);
  console.error('usage: bun run plugin:new <builder|tool> <id> [--dir <plugins root>]');
  process.exit(2);
}

const title = (id: string) => id.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());

function toolSource(id: string): string {
  return `import { Type, defineTool } from 'workflow-service/plugin-sdk';

/**
 * ${title(id)}: replace this with what the tool does. The host renders {{Column}} templates in the
 * config for each row, skips rows where a \`requires\` field is empty, and calls \`enrichOne\` for
 * each row, \`concurrency\` at once, one provider rate token per row. (A provider that answers many
 * rows in one request is called from \`enrich(items, ctx)\` instead, \`batchSize\` rows at a time.)
 */
export default defineTool({
  kind: 'tool',
  id: '${id}',
  version: '0.1.0',
  sdk: '^1.1',
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
  concurrency: 5,
  async enrichOne(item, ctx) {
    // A tool that calls a provider answers deterministic fake data (example.com) when
    // ctx.providerMode === 'sandbox', reads its key with requireEnv(ctx, 'X_API_KEY') and fetches
    // through providerJson (all from workflow-service/plugin-sdk), which enforces the network policy.
    void ctx;
    const text = String(item.config.text).trim();
    return text ? { status: 'ok', value: text.toUpperCase() } : { status: 'no_result', reason: 'empty text' };
  },
});
`;
}

function toolTest(id: string): string {
  return `import { expect, test } from 'bun:test';
import { assertTool, runTool } from 'workflow-service/plugin-testing';
import plugin from './index.ts';

test('${id} is a valid tool definition', () => {
  expect(() => assertTool(plugin, '${id}')).not.toThrow();
});

test('${id} answers one result per row, in order', async () => {
  // As in a column: the config's templates are filled from each row; a row without input is skipped.
  expect(await runTool(plugin, [{ Name: 'acme' }, { Name: '' }], { text: '{{Name}}' }, { providerMode: 'sandbox' })).toEqual([
    { status: 'ok', value: 'ACME' },
    { status: 'skipped', reason: 'missing input: text' },
  ]);
});
`;
}

function builderSource(id: string): string {
  return `import { Type, defineBuilder } from 'workflow-service/plugin-sdk';

/**
 * ${title(id)}: replace this with how the builder finds rows. The host validates the form against
 * \`input\`, reserves credits for \`target(form)\` rows, then writes each page \`run\` yields.
 */
export default defineBuilder({
  kind: 'builder',
  id: '${id}',
  version: '0.1.0',
  sdk: '^1.0',
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

function builderTest(id: string): string {
  return `import { expect, test } from 'bun:test';
import { assertBuilder, runBuilder } from 'workflow-service/plugin-testing';
import plugin from './index.ts';

test('${id} is a valid builder definition', () => {
  expect(() => assertBuilder(plugin, '${id}')).not.toThrow();
});

test('${id} yields one row per name', async () => {
  const form = { names: 'Acme\\n\\nGlobex' };
  expect(await runBuilder(plugin, form, { providerMode: 'sandbox' })).toEqual([{ Name: 'Acme' }, { Name: 'Globex' }]);
  expect(plugin.target(form)).toBe(2);
});
`;
}

/**
 * Whether `workflow-service` resolves from `dir` as a package: inside this repo (package.json
 * `exports` self-reference) or through a node_modules on the way up. Looked up by hand: resolving
 * could trigger Bun's auto-install of a package of that name.
 */
function sdkReachable(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (d === REPO || existsSync(join(d, 'node_modules', 'workflow-service'))) return true;
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
  const files = [join(folder, 'index.ts'), join(folder, `${id}.test.ts`)];
  writeFileSync(files[0] as string, kind === 'tool' ? toolSource(id) : builderSource(id));
  writeFileSync(files[1] as string, kind === 'tool' ? toolTest(id) : builderTest(id));
  // The service answers workflow-service/* for every plugin it loads; a plain `bun test` in a
  // folder outside the repo finds the SDK through node_modules/workflow-service, linked here (the
  // link resolves to this repo's own files, so plugin and host share one SDK).
  let linked: string | null = null;
  if (!sdkReachable(folder)) {
    const modules = join(root, 'node_modules');
    if (existsSync(modules) && lstatSync(modules).isSymbolicLink()) {
      console.error(
        `plugin:new: ${modules} is a link (made by an older plugin:new?); replace it with a folder holding a link workflow-service -> ${REPO}`,
      );
    } else {
      mkdirSync(modules, { recursive: true });
      linked = join(modules, 'workflow-service');
      symlinkSync(REPO, linked, 'dir');
    }
  }
  console.log(JSON.stringify({ kind, id, files, linked_sdk: linked, next: `bun test ${files[1]}` }, null, 2));
}

main(process.argv.slice(2));
