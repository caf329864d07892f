import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kind } from '@sinclair/typebox';
import type { AnyBuilder } from './plugin-types.ts';

const SLUG = /^[a-z][a-z0-9_]{1,63}$/;

/** A plugin whose definition is unusable; names the plugin and the field so the author can fix it. */
export class PluginDefinitionError extends Error {
  constructor(where: string, field: string, problem: string) {
    super(`plugin ${where}: field "${field}" ${problem}`);
    this.name = 'PluginDefinitionError';
  }
}

/** Checks the shape of a builder definition at start-up, before anything can call it. */
export function assertBuilder(def: unknown, where: string): asserts def is AnyBuilder {
  if (!def || typeof def !== 'object') throw new PluginDefinitionError(where, '(export)', 'must be an object');
  const d = def as Record<string, unknown>;
  const str = (f: string) => {
    if (typeof d[f] !== 'string' || d[f] === '') throw new PluginDefinitionError(where, f, 'must be a non-empty string');
  };
  const fn = (f: string) => {
    if (typeof d[f] !== 'function') throw new PluginDefinitionError(where, f, 'must be a function');
  };
  if (d.kind !== 'builder') throw new PluginDefinitionError(where, 'kind', 'must be "builder"');
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
  if (typeof d.maxRows !== 'number' || d.maxRows < 1) throw new PluginDefinitionError(where, 'maxRows', 'must be a number >= 1');
  for (const f of ['columns', 'projectName', 'target', 'run']) fn(f);
}

/** The registered plugins, looked up by public id or legacy id. */
export class PluginRegistry {
  private readonly builders = new Map<string, AnyBuilder>();
  private readonly aliases = new Map<string, string>();

  addBuilder(def: AnyBuilder, where = def.id): void {
    assertBuilder(def, where);
    for (const id of [def.id, ...def.legacyIds]) {
      if (this.builders.has(id) || this.aliases.has(id))
        throw new PluginDefinitionError(where, 'id', `"${id}" is already registered by another plugin`);
    }
    this.builders.set(def.id, def);
    for (const legacy of def.legacyIds) this.aliases.set(legacy, def.id);
  }

  /** A builder by public slug or legacy id. */
  builder(id: string): AnyBuilder | undefined {
    return this.builders.get(id) ?? this.builders.get(this.aliases.get(id) ?? '');
  }

  listBuilders(): AnyBuilder[] {
    return [...this.builders.values()];
  }
}

/** The plugin folders under `root/<kind>s/` (each holding an index.ts). */
function pluginFolders(root: string, kind: 'builders' | 'tools'): string[] {
  const dir = join(root, kind);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('_') && existsSync(join(dir, e.name, 'index.ts')))
    .map((e) => join(dir, e.name))
    .sort();
}

/** Loads the bundled plugins and those under `PLUGINS_DIR`; a bad definition stops start-up. */
export async function loadPlugins(extraDir?: string): Promise<PluginRegistry> {
  const registry = new PluginRegistry();
  const roots = [resolve(import.meta.dir, '../../plugins')];
  if (extraDir) roots.push(resolve(extraDir));
  for (const root of roots) {
    for (const folder of pluginFolders(root, 'builders')) {
      const mod = (await import(join(folder, 'index.ts'))) as Record<string, unknown>;
      registry.addBuilder(mod.default as AnyBuilder, folder);
    }
  }
  return registry;
}
