import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kind } from '@sinclair/typebox';
import { icpScoreTool } from '../icp/icp-score-tool.ts';
import { packageDefinitions, resolvePackage } from './plugin-packages.ts';
import type { AnyBuilder, AnyTool } from './plugin-types.ts';
import { registerSdkModules } from './sdk-modules.ts';

/** Tools of kernel features (ICP scoring), registered before any plugin so no plugin can take their ids. */
const KERNEL_TOOLS: unknown[] = [icpScoreTool];

const SLUG = /^[a-z][a-z0-9_]{1,63}$/;

/** A plugin whose definition is unusable; names the plugin and the field so the author can fix it. */
export class PluginDefinitionError extends Error {
  constructor(where: string, field: string, problem: string) {
    super(`plugin ${where}: field "${field}" ${problem}`);
    this.name = 'PluginDefinitionError';
  }
}

type Def = Record<string, unknown>;

/** Field checks shared by builders and tools. */
function assertBase(d: Def, where: string, kind: 'builder' | 'tool'): void {
  const str = (f: string) => {
    if (typeof d[f] !== 'string' || d[f] === '') throw new PluginDefinitionError(where, f, 'must be a non-empty string');
  };
  if (d.kind !== kind) throw new PluginDefinitionError(where, 'kind', `must be "${kind}"`);
  str('id');
  if (!SLUG.test(d.id as string)) throw new PluginDefinitionError(where, 'id', `must match ${SLUG}`);
  for (const f of ['version', 'name', 'description', 'category']) str(f);
  for (const f of ['tags', 'legacyIds']) {
    if (!Array.isArray(d[f]) || !(d[f] as unknown[]).every((x) => typeof x === 'string'))
      throw new PluginDefinitionError(where, f, 'must be an array of strings');
  }
  const input = d.input as Record<string | symbol, unknown> | undefined;
  if (!input || input[Kind] !== 'Object') throw new PluginDefinitionError(where, 'input', 'must be a TypeBox Type.Object schema');
  const cost = d.cost as Record<string, unknown> | undefined;
  if (!cost || typeof cost.credits !== 'number' || cost.credits < 0)
    throw new PluginDefinitionError(where, 'cost.credits', 'must be a number >= 0');
  if (!['row', 'result', 'attempt'].includes(cost.per as string))
    throw new PluginDefinitionError(where, 'cost.per', 'must be "row", "result" or "attempt"');
  const provider = d.provider as Record<string, unknown> | undefined;
  if (provider !== undefined && (!Array.isArray(provider.requiredEnv) || !provider.requiredEnv.every((x) => typeof x === 'string')))
    throw new PluginDefinitionError(where, 'provider.requiredEnv', 'must be an array of env var names');
}

function assertFunctions(d: Def, where: string, names: string[]): void {
  for (const f of names) if (typeof d[f] !== 'function') throw new PluginDefinitionError(where, f, 'must be a function');
}

/** Checks the shape of a builder definition at start-up, before anything can call it. */
export function assertBuilder(def: unknown, where: string): asserts def is AnyBuilder {
  if (!def || typeof def !== 'object') throw new PluginDefinitionError(where, '(default export)', 'must be a builder definition object');
  const d = def as Def;
  assertBase(d, where, 'builder');
  if (typeof d.maxRows !== 'number' || d.maxRows < 1) throw new PluginDefinitionError(where, 'maxRows', 'must be a number >= 1');
  assertFunctions(d, where, ['columns', 'projectName', 'target', 'run']);
}

/** Checks the shape of a tool definition at start-up. */
export function assertTool(def: unknown, where: string): asserts def is AnyTool {
  if (!def || typeof def !== 'object') throw new PluginDefinitionError(where, '(default export)', 'must be a tool definition object');
  const d = def as Def;
  assertBase(d, where, 'tool');
  if (!Array.isArray(d.requires) || !d.requires.every((x) => typeof x === 'string'))
    throw new PluginDefinitionError(where, 'requires', 'must be an array of config field names');
  const props = (d.input as { properties: Record<string, unknown> }).properties;
  for (const r of d.requires as string[]) {
    if (!(r in props)) throw new PluginDefinitionError(where, 'requires', `names "${r}", which is not a field of input`);
  }
  if (!Array.isArray(d.produces) || d.produces.length === 0 || !d.produces.every((p) => p && typeof p.field === 'string'))
    throw new PluginDefinitionError(where, 'produces', 'must be a non-empty array of {field, description}');
  if (typeof d.batchSize !== 'number' || !Number.isInteger(d.batchSize) || d.batchSize < 1)
    throw new PluginDefinitionError(where, 'batchSize', 'must be an integer >= 1');
  assertFunctions(d, where, ['enrich']);
  for (const f of ['isValid', 'cacheKey', 'checkConfig']) {
    if (d[f] !== undefined && typeof d[f] !== 'function') throw new PluginDefinitionError(where, f, 'must be a function when set');
  }
}

/** The registered plugins, looked up by public id or legacy id. */
export class PluginRegistry {
  private readonly builders = new Map<string, AnyBuilder>();
  private readonly tools = new Map<string, AnyTool>();
  private readonly aliases = new Map<string, string>();

  private claim(ids: string[], where: string): void {
    for (const id of ids) {
      if (this.builders.has(id) || this.tools.has(id) || this.aliases.has(id))
        throw new PluginDefinitionError(where, 'id', `"${id}" is already registered by another plugin`);
    }
  }

  addBuilder(def: unknown, where?: string): void {
    const at = where ?? String((def as Def | undefined)?.id);
    assertBuilder(def, at);
    this.claim([def.id, ...def.legacyIds], at);
    this.builders.set(def.id, def);
    for (const legacy of def.legacyIds) this.aliases.set(legacy, def.id);
  }

  addTool(def: unknown, where?: string): void {
    const at = where ?? String((def as Def | undefined)?.id);
    assertTool(def, at);
    this.claim([def.id, ...def.legacyIds], at);
    this.tools.set(def.id, def);
    for (const legacy of def.legacyIds) this.aliases.set(legacy, def.id);
  }

  /** A builder by public slug or legacy id. */
  builder(id: string): AnyBuilder | undefined {
    return this.builders.get(id) ?? this.builders.get(this.aliases.get(id) ?? '');
  }

  /** A tool by public slug or legacy id. */
  tool(id: string): AnyTool | undefined {
    return this.tools.get(id) ?? this.tools.get(this.aliases.get(id) ?? '');
  }

  listBuilders(): AnyBuilder[] {
    return [...this.builders.values()];
  }

  listTools(): AnyTool[] {
    return [...this.tools.values()];
  }
}

/** The plugin folders under `root/<kind>/` (each holding an index.ts; `_shared` folders are skipped). */
function pluginFolders(root: string, kind: 'builders' | 'tools'): string[] {
  const dir = join(root, kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('_') && existsSync(join(dir, e.name, 'index.ts')))
    .map((e) => join(dir, e.name))
    .sort();
}

/**
 * Loads the kernel's tools, the bundled plugins (plugins/builders, plugins/tools), those under
 * PLUGINS_DIR, then the definitions of each npm package named in PLUGINS. A bad definition, a
 * package that cannot be found or an id already taken stops start-up, naming the folder or package.
 */
export async function loadPlugins(extraDir?: string, packages: string[] = []): Promise<PluginRegistry> {
  registerSdkModules();
  const registry = new PluginRegistry();
  for (const tool of KERNEL_TOOLS) registry.addTool(tool, 'core (kernel tool)');
  const roots = [resolve(import.meta.dir, '../../plugins')];
  if (extraDir) roots.push(resolve(extraDir));
  for (const root of roots) {
    for (const folder of pluginFolders(root, 'builders')) {
      const mod = (await import(join(folder, 'index.ts'))) as Record<string, unknown>;
      registry.addBuilder(mod.default, folder);
    }
    for (const folder of pluginFolders(root, 'tools')) {
      const mod = (await import(join(folder, 'index.ts'))) as Record<string, unknown>;
      registry.addTool(mod.default, folder);
    }
  }
  for (const entry of packages) {
    const mod = (await import(resolvePackage(entry))) as Record<string, unknown>;
    for (const { kind, definition, where } of packageDefinitions(entry, mod)) {
      if (kind === 'builder') registry.addBuilder(definition, where);
      else registry.addTool(definition, where);
    }
  }
  return registry;
}
