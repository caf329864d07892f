import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { kernelRegistry, type PluginRegistry } from '../core/plugins/registry.ts';
import { registerSdkModules } from '../sdk/sdk-modules.ts';
import { packageDefinitions, resolvePackage } from './plugin-packages.ts';

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
  const registry = kernelRegistry();
  const roots = [resolve(import.meta.dir, '../plugins')];
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
