import { isAbsolute, resolve } from 'node:path';

/** Where package names in PLUGINS are looked up: the service's own folder, where `bun add` installs them. */
export const SERVICE_ROOT = resolve(import.meta.dir, '..');

/** A PLUGINS entry that cannot be loaded: names the entry and says what to do. */
export class PluginPackageError extends Error {
  constructor(entry: string, problem: string) {
    super(`PLUGINS: package "${entry}" ${problem}`);
    this.name = 'PluginPackageError';
  }
}

/** A definition found in a package, with where it came from for error messages. */
export interface PackagedDefinition {
  kind: 'builder' | 'tool';
  definition: unknown;
  where: string;
}

const isPath = (entry: string) => isAbsolute(entry) || entry.startsWith('./') || entry.startsWith('../');

/**
 * The file a PLUGINS entry names: a package name resolved from the service's folder (installed
 * with `bun add <name>`, or linked there with `bun link`), or a path to a package folder (relative
 * to the working directory).
 */
export function resolvePackage(entry: string): string {
  try {
    return isPath(entry) ? Bun.resolveSync(resolve(entry), SERVICE_ROOT) : Bun.resolveSync(entry, SERVICE_ROOT);
  } catch {
    const hint = isPath(entry)
      ? 'is not a package folder or module file'
      : `is not installed in ${SERVICE_ROOT} (bun add ${entry}, or bun link it)`;
    throw new PluginPackageError(entry, hint);
  }
}

const kindOf = (v: unknown): 'builder' | 'tool' | null => {
  const kind = v && typeof v === 'object' ? (v as { kind?: unknown }).kind : undefined;
  return kind === 'builder' || kind === 'tool' ? kind : null;
};

/**
 * The definitions a package module exports: its default export (one definition or an array of
 * them) and every named export that is a definition (`kind` 'builder' or 'tool'); the same object
 * exported twice counts once. A default export that is not a definition, or a package with no
 * definition at all, is refused. The registry then checks each definition's fields.
 */
export function packageDefinitions(entry: string, mod: Record<string, unknown>): PackagedDefinition[] {
  const found: [unknown, string][] = [];
  if (Array.isArray(mod.default)) for (const [i, d] of mod.default.entries()) found.push([d, `default export [${i}]`]);
  else if (mod.default !== undefined) found.push([mod.default, 'default export']);
  for (const [name, value] of Object.entries(mod)) if (name !== 'default' && kindOf(value)) found.push([value, `export ${name}`]);
  const out: PackagedDefinition[] = [];
  const seen = new Set<unknown>();
  for (const [definition, what] of found) {
    const kind = kindOf(definition);
    if (!kind)
      throw new PluginPackageError(
        entry,
        `${what} is not a plugin definition (its kind must be "builder" or "tool"; make it with defineTool or defineBuilder)`,
      );
    if (seen.has(definition)) continue;
    seen.add(definition);
    out.push({ kind, definition, where: `package ${entry} (${what})` });
  }
  if (out.length === 0) {
    throw new PluginPackageError(
      entry,
      'exports no plugin definition: export one made with defineTool or defineBuilder as the default export, an array of them, or named exports',
    );
  }
  return out;
}
