import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { icpScoreTool } from '../icp/icp-score-tool.ts';
import { PluginDefinitionError, assertBuilder, assertTool } from './definition-checks.ts';
import { packageDefinitions, resolvePackage } from './plugin-packages.ts';
import type { AnyBuilder, AnyTool } from './plugin-types.ts';
import { registerSdkModules } from './sdk-modules.ts';

/** Tools of kernel features (ICP scoring), registered before any plugin so no plugin can take their ids. */
const KERNEL_TOOLS: unknown[] = [icpScoreTool];

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
    const at = where ?? String((def as { id?: unknown } | undefined)?.id);
    assertBuilder(def, at);
    this.claim([def.id, ...def.legacyIds], at);
    this.builders.set(def.id, def);
    for (const legacy of def.legacyIds) this.aliases.set(legacy, def.id);
  }

  addTool(def: unknown, where?: string): void {
    const at = where ?? String((def as { id?: unknown } | undefined)?.id);
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
